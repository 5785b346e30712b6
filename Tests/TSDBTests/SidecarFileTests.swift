import XCTest

@testable import TSDB
@testable import TSDBAppleHealth
@testable import TSDBSynthetic

/// Route points (GPX) and electrocardiograms (CSV), the files beside an export's XML: read from
/// their bytes, they must give what reading them through strings gave, sample for sample and
/// string for string (`ReferenceSidecars`, the string-based readers these replaced).
final class SidecarFileTests: XCTestCase {
    func testGeneratedRoutesReadAsThroughStrings() throws {
        for minutes: Int64 in [0, 1, 45, 240] {
            let start: Int64 = 1_740_000_000_000_000
            let gpx = AppleExportGenerator.gpx(from: start, to: start + minutes * 60_000_000)
            try assertRoutesAgree(gpx)
        }
    }

    func testEveryKindOfPointReadsAsThroughStrings() throws {
        var random = SplitMix64(seed: 41)
        var plain = 0
        for _ in 0..<300 {
            var gpx = "<gpx><trk><trkseg>\n"
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let point = Self.point(&random)
                plain += Array(point.utf8).withUnsafeBytes { RoutePoints.isPlainASCII($0) } ? 1 : 0
                gpx += point
            }
            try assertRoutesAgree(gpx + "</trkseg></trk></gpx>")
        }
        XCTAssertGreaterThan(plain, 500, "most points should take the path from bytes")
    }

    func testGeneratedElectrocardiogramsReadAsThroughStrings() throws {
        for offset in [0, 60, -300, 345] {
            let csv = AppleExportGenerator.electrocardiogram(at: 1_740_000_000_000_000, offset)
            try assertElectrocardiogramsAgree(csv)
            try assertElectrocardiogramsAgree(csv.replacing("\n", with: "\r\n"))
        }
    }

    func testEveryKindOfReadingReadsAsThroughStrings() throws {
        var random = SplitMix64(seed: 83)
        let headers = [
            "Name,Alex", "Recorded Date,2025-01-03 10:00:00 +0100", "Recorded Date,2025-01-03 10:00:00 +0545",
            "Sample Rate,512 hertz", "Sample Rate,256 Hz", "Sample Rate,0 hertz", "Unit,µV", "Unit,mV",
            "Device,\"Watch6,2\"", "Symptoms,", "Lead,Lead I", "", "no comma", "Classification,\"a \"\"b\"\"\"",
        ]
        let readings = [
            "-20.000", "163.918", "0", "-0", "12", "1e3", "-1.5E-2", "\"-73,626\"", "-73,626", "1,2.3", "\"\"",
            "\"", "abc", "", " 12", "12 ", "1.", ".5", "007", "-", "µ12", "12\r", "9223372036854775808",
            "0.000000000000000000001", "\"5\"", "1,000,000",
        ]
        for _ in 0..<400 {
            var lines = (0..<Int.random(in: 0...9, using: &random)).map { _ in headers.randomElement(using: &random)! }
            lines += (0..<Int.random(in: 0...40, using: &random)).map { _ in readings.randomElement(using: &random)! }
            let newline = Bool.random(using: &random) ? "\n" : "\r\n"
            var text = Array(lines.joined(separator: newline).utf8)
            if Bool.random(using: &random) { text += Array(newline.utf8) }
            if Int.random(in: 0..<10, using: &random) == 0 {
                text.insert(0xFF, at: Int.random(in: 0...text.count, using: &random))
            }
            try assertElectrocardiogramsAgree(bytes: text)
        }
    }

    func testLinesAreTheCharactersSplitAtNewlines() {
        var random = SplitMix64(seed: 5)
        let pieces: [[UInt8]] = [
            [0x0A], [0x0D], [0x0D, 0x0A], [0x61], [0x2C], [0xC3, 0xA9], [0xC3], [0xFF], [0xCC, 0x81],
        ]
        for length in 0..<400 {
            let text = (0..<length % 40).flatMap { _ in pieces.randomElement(using: &random)! }
            let expected = String(decoding: text, as: UTF8.self).split(omittingEmptySubsequences: false) {
                $0 == "\n" || $0 == "\r\n"
            }.map(String.init)
            text.withUnsafeBytes { b in
                var lines = LineRanges(b)
                var got: [String] = []
                while let r = lines.next() {
                    got.append(String(decoding: UnsafeRawBufferPointer(rebasing: b[r]), as: UTF8.self))
                }
                XCTAssertEqual(got, expected, "\(text)")
            }
        }
    }

    func testPlainASCIIAtEveryPosition() {
        for length in 0..<40 {
            for position in 0..<max(length, 1) {
                for odd: UInt8 in [0x26, 0x80, 0xC3, 0xFF, 0x25, 0x27, 0x7F, 0x06] {
                    var bytes = [UInt8](repeating: 0x61, count: length)
                    if length > 0 { bytes[position] = odd }
                    let expected = bytes.allSatisfy { $0 < 0x80 && $0 != 0x26 }
                    XCTAssertEqual(bytes.withUnsafeBytes { RoutePoints.isPlainASCII($0) }, expected, "\(bytes)")
                }
            }
        }
    }

    func testJSONNumbersAreJSONsGrammar() {
        var random = SplitMix64(seed: 12)
        let alphabet = Array("-+.eE0123456789x ".utf8)
        for length in 0..<3000 {
            let text = (0..<length % 9).map { _ in alphabet.randomElement(using: &random)! }
            text.withUnsafeBytes { b in
                XCTAssertEqual(ExportSamples.isJSONNumber(b), ReferenceSidecars.isJSONNumber(b), "\(text)")
            }
        }
        for (text, expected) in [
            ("0", true), ("-0.5e+3", true), ("01", false), ("1.", false), ("-", false), ("", false),
        ] {
            XCTAssertEqual(ExportSamples.isJSONNumber(text), expected, text)
        }
    }

    // MARK: - Helpers

    /// A track point with fields drawn from what GPX writers put there, and from what breaks readers.
    static func point(_ random: inout SplitMix64) -> String {
        let values = [
            "48.8566", "2.3522", "-0.5", "35", "1e3", "abc", "4,1", "x&amp;y", "caf\u{e9}", "\\\"q\\\"", "a\tb", "",
            "&lt;", "&#233;", "&bogus;", "01",
        ]
        let times = ["2025-01-01T06:57:22Z", "2025-01-01T06:57:22.5+01:00", "2025-13-01T00:00:00Z", "yesterday", ""]
        func value() -> String {
            Int.random(in: 0..<4, using: &random) == 0
                ? values.randomElement(using: &random)! : "48.8\(Int.random(in: 0..<999, using: &random))"
        }
        var attributes: [String] = []
        for name in ["lat", "lon", "time", "file", "hAcc"]
        where Int.random(in: 0..<6, using: &random) > 0 || name == "lat" {
            guard name != "time" && name != "file" || Int.random(in: 0..<4, using: &random) == 0 else { continue }
            attributes.append("\(name)=\"\(name == "time" ? times.randomElement(using: &random)! : value())\"")
        }
        attributes.shuffle(using: &random)
        var children = ""
        if Int.random(in: 0..<10, using: &random) > 0 {
            let time = Int.random(in: 0..<8, using: &random) > 0 ? times[0] : times.randomElement(using: &random)!
            children += "<time>\(time)</time>"
        }
        for name in ["ele", "speed", "course", "lat", "file", "ext\u{e9}"]
        where Int.random(in: 0..<3, using: &random) > 0 {
            guard !["lat", "file", "ext\u{e9}"].contains(name) || Int.random(in: 0..<5, using: &random) == 0 else {
                continue
            }
            let child = "<\(name)>\(value())</\(name)>"
            children += Bool.random(using: &random) ? "<extensions>\(child)</extensions>" : child
        }
        return "<trkpt \(attributes.joined(separator: " "))>\(children)</trkpt>\n"
    }

    func assertRoutesAgree(_ gpx: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var (fast, reference) = (ParsedDayFile(), ParsedDayFile())
        let path = "/workout-routes/route_2025-01-01_6.57am.gpx"
        let (skipped, referenceSkipped) = Array(gpx.utf8).withUnsafeBytes { b in
            (
                RoutePoints.add(gpx: b, file: path, route: nil, to: &fast),
                ReferenceSidecars.addRoute(gpx: b, file: path, to: &reference)
            )
        }
        XCTAssertEqual(skipped, referenceSkipped, file: file, line: line)
        assertSame(fast, reference, gpx, file: file, line: line)
    }

    func assertElectrocardiogramsAgree(_ csv: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try assertElectrocardiogramsAgree(bytes: Array(csv.utf8), file: file, line: line)
    }

    func assertElectrocardiogramsAgree(bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws {
        var (fast, reference) = (ParsedDayFile(), ParsedDayFile())
        let path = "/electrocardiograms/ecg_2025-01-03.csv"
        let (read, referenceRead) = bytes.withUnsafeBytes { b in
            (
                Electrocardiograms.add(csv: b, file: path, to: &fast),
                ReferenceSidecars.addElectrocardiogram(csv: b, file: path, to: &reference)
            )
        }
        XCTAssertEqual(read, referenceRead, file: file, line: line)
        assertSame(fast, reference, String(decoding: bytes, as: UTF8.self), file: file, line: line)
    }

    /// The same samples, with the same string ids, in the same string table.
    func assertSame(
        _ a: ParsedDayFile, _ b: ParsedDayFile, _ input: String, file: StaticString, line: UInt
    ) {
        XCTAssertEqual(a.strings.count, b.strings.count, "strings of \(input)", file: file, line: line)
        for id in 0..<min(a.strings.count, b.strings.count) {
            let (x, y) = (a.strings.withBytes(Int32(id)) { Array($0) }, b.strings.withBytes(Int32(id)) { Array($0) })
            XCTAssertEqual(
                String(decoding: x, as: UTF8.self), String(decoding: y, as: UTF8.self), "string \(id)", file: file,
                line: line)
            XCTAssertEqual(x, y, file: file, line: line)
        }
        XCTAssertEqual(a.samples.count, b.samples.count, "samples of \(input)", file: file, line: line)
        for (k, (x, y)) in zip(a.samples, b.samples).enumerated() {
            XCTAssertTrue(
                x.sameSample(as: y) && x.fromExport == y.fromExport, "sample \(k) of \(input)", file: file, line: line)
        }
    }
}

/// The readers of route points and electrocardiograms as they were before they read bytes
/// (everything through `String`), kept as the oracle their replacements must agree with.
enum ReferenceSidecars {
    static func addRoute(gpx: UnsafeRawBufferPointer, file: String, to parsed: inout ParsedDayFile) -> Int {
        let (type, source, device) = (
            parsed.intern(RoutePoints.type), ParsedDayFile.absentText, ParsedDayFile.absentText
        )
        var json: [UInt8] = []
        var skipped = 0
        var cursor = 0
        while let open = RoutePoints.find("<trkpt", in: gpx, from: cursor) {
            guard let tagEnd = RoutePoints.find(">", in: gpx, from: open),
                let close = RoutePoints.find("</trkpt>", in: gpx, from: tagEnd)
            else { break }
            cursor = close + 8
            var fields = attributes(UnsafeRawBufferPointer(rebasing: gpx[open + 6..<tagEnd]))
            fields += childTexts(UnsafeRawBufferPointer(rebasing: gpx[tagEnd + 1..<close]))
            guard let time = fields.first(where: { $0.0 == "time" }).flatMap({ Timestamp($0.1) }),
                fields.contains(where: { $0.0 == "lat" }), fields.contains(where: { $0.0 == "lon" })
            else {
                skipped += 1
                continue
            }
            var members: [(String, JSONText)] = [("file", .string(file))]
            for (k, v) in fields where k != "time" {
                members.append((k, ExportSamples.isJSONNumber(v) ? .number(v) : .string(v)))
            }
            json.removeAll(keepingCapacity: true)
            JSONText.object(members).append(to: &json)
            let metadata = json.withUnsafeBytes { parsed.intern($0) }
            parsed.add(
                time, time, .null, type: type, unit: ParsedDayFile.absentText, source: source, device: device,
                metadata: metadata)
        }
        return skipped
    }

    static func attributes(_ b: UnsafeRawBufferPointer) -> [(String, String)] {
        var out: [(String, String)] = []
        var i = 0
        while let eq = RoutePoints.find("=\"", in: b, from: i), let end = RoutePoints.find("\"", in: b, from: eq + 2) {
            var nameStart = eq
            while nameStart > i && b[nameStart - 1] != 0x20 && b[nameStart - 1] != 0x09 && b[nameStart - 1] != 0x0A {
                nameStart -= 1
            }
            out.append((RoutePoints.text(b, nameStart..<eq), RoutePoints.text(b, eq + 2..<end)))
            i = end + 1
        }
        return out
    }

    static func childTexts(_ b: UnsafeRawBufferPointer) -> [(String, String)] {
        var out: [(String, String)] = []
        var i = 0
        while let lt = RoutePoints.find("<", in: b, from: i), let gt = RoutePoints.find(">", in: b, from: lt) {
            i = gt + 1
            guard lt + 1 < gt, b[lt + 1] != UInt8(ascii: "/"), b[gt - 1] != UInt8(ascii: "/") else { continue }
            let name = RoutePoints.text(b, lt + 1..<gt)
            guard let next = RoutePoints.find("<", in: b, from: gt), next + 1 < b.count,
                b[next + 1] == UInt8(ascii: "/")
            else { continue }
            out.append((name, RoutePoints.text(b, gt + 1..<next)))
            i = next
        }
        return out
    }

    static func addElectrocardiogram(csv: UnsafeRawBufferPointer, file: String, to parsed: inout ParsedDayFile) -> Bool
    {
        let lines = String(decoding: csv, as: UTF8.self).split(omittingEmptySubsequences: false) {
            $0 == "\n" || $0 == "\r\n"
        }
        var header: [(String, String)] = []
        var start: (micros: Int64, offsetMinutes: Int)?
        var rate: Double?
        var unit: String?
        var firstVoltage = lines.count
        for (i, line) in lines.enumerated() {
            if ExportSamples.number(replacingComma(String(line))) != nil, start != nil {
                firstVoltage = i
                break
            }
            guard let comma = line.firstIndex(of: ",") else { continue }
            let key = String(line[..<comma])
            let value = Electrocardiograms.unquoted(line[line.index(after: comma)...])
            header.append((key, value))
            if start == nil, value.utf8.count == 25 {
                var v = value
                start = v.withUTF8 { HealthDate.parse(UnsafeRawBufferPointer($0)) }
            }
            let words = value.split(separator: " ")
            if rate == nil, words.count == 2, let hz = Double(words[0]), hz > 0, words[1].allSatisfy(\.isLetter) {
                rate = hz
            }
            if unit == nil, value.hasSuffix("V"), value.count <= 3 { unit = value }
        }
        guard let start, let rate, firstVoltage < lines.count else { return false }
        let form = TimeForm(offsetMinutes: Int16(start.offsetMinutes), fractionDigits: 6)
        var count = 0
        for line in lines[firstVoltage...] where !line.isEmpty {
            guard let value = ExportSamples.number(replacingComma(String(line))) else { continue }
            let at = Timestamp(microseconds: start.micros + Int64((Double(count) * 1e6 / rate).rounded()), form: form)
            parsed.add(
                Sample(
                    type: Electrocardiograms.voltageType, start: at, end: at, value: value,
                    unit: unit.map(OptionalText.text) ?? .absent))
            count += 1
        }
        var members: [(String, JSONText)] = [("file", .string(file))]
        for (k, v) in header { members.append((k, .string(v))) }
        var json: [UInt8] = []
        JSONText.object(members).append(to: &json)
        let begin = Timestamp(microseconds: start.micros, form: TimeForm(offsetMinutes: Int16(start.offsetMinutes)))
        let end = Timestamp(microseconds: start.micros + Int64((Double(count) * 1e6 / rate).rounded()), form: form)
        parsed.add(
            Sample(
                type: Electrocardiograms.type, start: begin, end: end, value: .null, unit: .absent,
                metadata: .text(String(decoding: json, as: UTF8.self))))
        return true
    }

    static func isJSONNumber(_ raw: UnsafeRawBufferPointer) -> Bool {
        var u = raw[...]
        func digits() -> Int {
            var n = 0
            while let c = u.first, c >= 48 && c <= 57 {
                u = u.dropFirst()
                n += 1
            }
            return n
        }
        if u.first == UInt8(ascii: "-") { u = u.dropFirst() }
        guard let first = u.first, first >= 48 && first <= 57 else { return false }
        if first == 48 { u = u.dropFirst() } else { _ = digits() }
        if u.first == UInt8(ascii: ".") {
            u = u.dropFirst()
            guard digits() > 0 else { return false }
        }
        if u.first == UInt8(ascii: "e") || u.first == UInt8(ascii: "E") {
            u = u.dropFirst()
            if u.first == UInt8(ascii: "+") || u.first == UInt8(ascii: "-") { u = u.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return u.isEmpty
    }

    static func replacingComma(_ s: String) -> String {
        var t = s
        if t.hasPrefix("\"") && t.hasSuffix("\"") && t.count >= 2 { t = String(t.dropFirst().dropLast()) }
        return t.contains(",") && !t.contains(".") ? String(t.map { $0 == "," ? "." : $0 }) : t
    }
}
