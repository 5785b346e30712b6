import TSDB

/// An electrocardiogram (`electrocardiograms/ecg_….csv` in the export) as samples: one
/// `HKDataTypeIdentifierElectrocardiogram` sample spanning the recording, its header lines kept as
/// written in its metadata (names are in the phone's language) with `file`; and one
/// `HKElectrocardiogramVoltage` sample per reading, at the recording's start plus its index over the
/// sample rate, the voltage's digits as written, in the file's unit (µV).
///
/// The file is positional, whatever the language: `key,value` header lines (the recorded date is
/// the one in Health's date form, the rate the `512 hertz` one), a blank line, lead and unit, a
/// blank line, then one voltage a line.
enum Electrocardiograms {
    static let type = "HKDataTypeIdentifierElectrocardiogram"
    static let voltageType = "HKElectrocardiogramVoltage"

    /// Adds the samples of one CSV file; false when it is not an electrocardiogram this reads.
    static func add(csv: UnsafeRawBufferPointer, file: String, to parsed: inout ParsedDayFile) -> Bool {
        var lines = LineRanges(csv)
        var header: [(String, String)] = []
        var start: (micros: Int64, offsetMinutes: Int)?
        var rate: Double?
        var unit: String?
        var firstVoltage: Range<Int>?
        while let range = lines.next() {
            let line = String(decoding: UnsafeRawBufferPointer(rebasing: csv[range]), as: UTF8.self)[...]
            if ExportSamples.number(String(line).replacingComma()) != nil, start != nil {
                firstVoltage = range
                break
            }
            guard let comma = line.firstIndex(of: ",") else { continue }
            let key = String(line[..<comma])
            let value = unquoted(line[line.index(after: comma)...])
            header.append((key, value))
            if start == nil, value.utf8.count == 25 {
                var v = value
                start = v.withUTF8 { HealthDate.parse(UnsafeRawBufferPointer($0)) }
            }
            let words = value.split(separator: " ")
            if rate == nil, words.count == 2, let hz = Double(words[0]), hz > 0, words[1].allSatisfy(\.isLetter) {
                rate = hz
            }
            if unit == nil, value.hasSuffix("V"), value.count <= 3 { unit = value }  // µV, mV
        }
        guard let start, let rate, var range = firstVoltage else { return false }
        let form = TimeForm(offsetMinutes: Int16(start.offsetMinutes), fractionDigits: 6)
        // Interned at the first reading, as a `Sample` of each reading interned them (ids follow
        // the order strings first appear).
        var ids: (type: Int32, unit: Int32)?
        var count = 0
        while true {
            // A reading's line read from its bytes: through strings, ~7,000 instructions a reading
            // (15% of a year's import on the thread building samples, callgrind).
            if !range.isEmpty, let value = Self.reading(UnsafeRawBufferPointer(rebasing: csv[range])) {
                let at = Timestamp(
                    microseconds: start.micros + Int64((Double(count) * 1e6 / rate).rounded()), form: form)
                if ids == nil {
                    ids = (parsed.intern(voltageType), unit.map { parsed.intern($0) } ?? ParsedDayFile.absentText)
                }
                parsed.add(
                    at, at, value, type: ids!.type, unit: ids!.unit, source: ParsedDayFile.absentText,
                    device: ParsedDayFile.absentText, metadata: ParsedDayFile.absentText)
                count += 1
            }
            guard let next = lines.next() else { break }
            range = next
        }
        var members: [(String, JSONText)] = [("file", .string(file))]
        for (k, v) in header { members.append((k, .string(v))) }
        var json: [UInt8] = []
        JSONText.object(members).append(to: &json)
        let begin = Timestamp(microseconds: start.micros, form: TimeForm(offsetMinutes: Int16(start.offsetMinutes)))
        let end = Timestamp(microseconds: start.micros + Int64((Double(count) * 1e6 / rate).rounded()), form: form)
        parsed.add(
            Sample(
                type: type, start: begin, end: end, value: .null, unit: .absent,
                metadata: .text(String(decoding: json, as: UTF8.self))))
        return true
    }

    /// The value of a reading's line, as `ExportSamples.number(String(line).replacingComma())`
    /// gives it: quotes around it dropped, and a decimal comma read as a point.
    static func reading(_ line: UnsafeRawBufferPointer) -> SampleValue? {
        // Beyond ASCII a byte is not one character; such a line is read as text.
        guard line.allSatisfy({ $0 < 0x80 }) else {
            return ExportSamples.number(String(decoding: line, as: UTF8.self).replacingComma())
        }
        var t = line[...]
        if t.count >= 2 && t.first == UInt8(ascii: "\"") && t.last == UInt8(ascii: "\"") {
            t = t.dropFirst().dropLast()
        }
        guard t.contains(UInt8(ascii: ",")) && !t.contains(UInt8(ascii: ".")) else {
            return ExportSamples.number(raw: UnsafeRawBufferPointer(rebasing: t))
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: t.count) { copy in
            for (k, byte) in t.enumerated() { copy[k] = byte == UInt8(ascii: ",") ? UInt8(ascii: ".") : byte }
            return ExportSamples.number(raw: UnsafeRawBufferPointer(copy))
        }
    }

    /// A CSV field without its quotes (`"Watch4,4"` → `Watch4,4`).
    static func unquoted(_ field: Substring) -> String {
        guard field.count >= 2, field.first == "\"", field.last == "\"" else { return String(field) }
        return String(field.dropFirst().dropLast().replacing("\"\"", with: "\""))
    }
}

extension String {
    /// `-73,626` (a decimal comma, as some locales write voltages) → `-73.626`.
    fileprivate func replacingComma() -> String {
        var t = self
        if t.hasPrefix("\"") && t.hasSuffix("\"") && t.count >= 2 { t = String(t.dropFirst().dropLast()) }
        return t.contains(",") && !t.contains(".") ? String(t.map { $0 == "," ? "." : $0 }) : t
    }
}

/// The lines of a text as ranges of its bytes, as splitting its characters at `\n` and `\r\n`
/// gives them (empty ones included; a `\r` not before a `\n` stays in its line).
struct LineRanges {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    private var done = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func next() -> Range<Int>? {
        guard !done else { return nil }
        let start = position
        guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
            done = true
            return start..<bytes.count
        }
        position = newline + 1
        let end = newline > start && bytes[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
        return start..<end
    }
}
