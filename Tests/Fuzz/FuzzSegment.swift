// libFuzzer target for the segment reader (built by Tests/Fuzz/run-fuzzers.sh together with the
// engine's sources). Property: any bytes either fail validation with an error or open and decode
// every block; nothing crashes or reads out of bounds (AddressSanitizer checks the latter).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSegment(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkSegmentBytes(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
