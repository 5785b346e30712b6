// Rasterises a chart's SVG (standard input) to PNG (standard output) with librsvg, for `tsdb plot
// --out FILE.png`. A program of its own: librsvg is loaded with `dlopen`, which a fully static `tsdb`
// (`.ci/setup fast`) cannot do, so `tsdb` runs this one, built beside it.
//
// Usage: tsdb-png WIDTH HEIGHT   (the chart's size in CSS pixels; the PNG has twice as many)

import TSDB
import TSDBCharts

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func fail(_ message: String) -> Never {
    let line = Array("tsdb-png: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let width = Double(arguments.first!), let height = Double(arguments.last!),
    width > 0, height > 0
else { fail("usage: tsdb-png WIDTH HEIGHT < chart.svg > chart.png") }

var svg: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 1 << 16)
while true {
    let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
    if n < 0 && errno == EINTR { continue }
    guard n >= 0 else { fail("cannot read the SVG: \(String(cString: strerror(errno)))") }
    if n == 0 { break }
    svg += chunk[..<n]
}
do throws(TSDBError) {
    let png = try PNGRenderer.render(svg: String(decoding: svg, as: UTF8.self), width: width, height: height)
    try FileSystem.writeAll(1, png, path: "standard output")
} catch {
    fail(error.message)
}
