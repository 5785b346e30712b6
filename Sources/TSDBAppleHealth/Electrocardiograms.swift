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
        let lines = String(decoding: csv, as: UTF8.self).split(omittingEmptySubsequences: false) {
            $0 == "\n" || $0 == "\r\n"
        }
        var header: [(String, String)] = []
        var start: (micros: Int64, offsetMinutes: Int)?
        var rate: Double?
        var unit: String?
        var firstVoltage = lines.count
        for (i, line) in lines.enumerated() {
            if ExportSamples.number(String(line).replacingComma()) != nil, start != nil {
                firstVoltage = i
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
        guard let start, let rate, firstVoltage < lines.count else { return false }
        let form = TimeForm(offsetMinutes: Int16(start.offsetMinutes), fractionDigits: 6)
        var count = 0
        for line in lines[firstVoltage...] where !line.isEmpty {
            guard let value = ExportSamples.number(String(line).replacingComma()) else { continue }
            let at = Timestamp(microseconds: start.micros + Int64((Double(count) * 1e6 / rate).rounded()), form: form)
            parsed.add(
                Sample(
                    type: voltageType, start: at, end: at, value: value, unit: unit.map(OptionalText.text) ?? .absent))
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
                type: type, start: begin, end: end, value: .null, unit: .absent,
                metadata: .text(String(decoding: json, as: UTF8.self))))
        return true
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
