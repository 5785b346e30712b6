// libFuzzer target for the raw day-file parser (built by Tests/Fuzz/run-fuzzers.sh together with
// the engine's sources). Property: any input is either rejected with an error or parsed into
// samples that, written back as a day file and parsed again, come out the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRawJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkRawJSON(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
