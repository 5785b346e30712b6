// libFuzzer target for Apple Health's export scanner (built by Tests/Fuzz/run-fuzzers.sh with the
// engine's and TSDBAppleHealth's sources). Property: the same elements, or an error, whatever the
// chunking, and whether tags are read in one pass or two; nothing crashes or reads out of bounds
// (AddressSanitizer checks the latter).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExportXML(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkExportXML(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
