import Foundation

@testable import TSDB
@testable import TSDBAppleHealth

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Turns a real HealthKit `export.xml` into day files the way the seed's exporter writes them:
/// one file per local day, every sample listed in each day it overlaps, category values as
/// integers, metadata entries as a JSON object. Test-only: it gives the engine real-world input.
final class AppleHealthExport: NSObject, XMLParserDelegate {
    private(set) var samples: [Sample] = []
    private var current: Sample?
    private var metadata: [(String, String)] = []

    static func load(zip: String, into folder: String) throws -> [Sample] {
        let unzip = Process()
        unzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        unzip.arguments = ["python3", "-m", "zipfile", "-e", zip, folder]
        unzip.environment = ProcessInfo.processInfo.environment
        try unzip.run()
        unzip.waitUntilExit()
        guard unzip.terminationStatus == 0 else { throw TSDBError(.io, "could not unzip", path: zip) }
        // swift-corelibs-foundation's XMLParser crashes on the DTD's ATTLIST declarations, so the
        // internal DOCTYPE subset (structure only, no data) is cut out first.
        var xml = try Data(contentsOf: URL(fileURLWithPath: folder + "/apple_health_export/export.xml"))
        if let start = xml.range(of: Data("<!DOCTYPE".utf8)),
            let end = xml.range(of: Data("]>".utf8), in: start.upperBound..<xml.endIndex)
        {
            xml.removeSubrange(start.lowerBound..<end.upperBound)
        }
        let parser = XMLParser(data: xml)
        let export = AppleHealthExport()
        parser.delegate = export
        guard parser.parse() else { throw TSDBError(.invalidInput, "export.xml did not parse", path: zip) }
        return export.samples
    }

    /// `2021-11-09 02:25:29 +0200` → the same instant and offset as a timestamp.
    static func timestamp(_ text: String) -> Timestamp? {
        var t = text
        guard let p = t.withUTF8({ HealthDate.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        return Timestamp(microseconds: p.micros, form: TimeForm(offsetMinutes: Int16(p.offsetMinutes)))
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes a: [String: String]
    ) {
        if name == "Record", let type = a["type"], let start = a["startDate"].flatMap(Self.timestamp),
            let end = a["endDate"].flatMap(Self.timestamp)
        {
            var value = SampleValue.absent
            if let v = a["value"] {
                if let n = ExportSamples.categoryValues[v] {
                    value = .decimal(ExactDecimal(mantissa: n, scale: 0))
                } else {
                    var bytes = Array(v.utf8)
                    value =
                        bytes.withUnsafeMutableBytes { DayFileParser.exactDecimal(UnsafeRawBufferPointer($0)) }.map {
                            .decimal($0)
                        }
                        ?? (Double(v) != nil ? .numberText(v) : .null)
                }
            }
            current = Sample(
                type: type, start: start, end: end, value: value, unit: a["unit"].map { .text($0) } ?? .null,
                source: a["sourceName"].map { .text($0) } ?? .absent, device: a["device"].map { .text($0) } ?? .null)
            metadata = []
        } else if name == "MetadataEntry", current != nil, let k = a["key"], let v = a["value"] {
            metadata.append((k, v))
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        guard name == "Record", var s = current else { return }
        if !metadata.isEmpty {
            var w = ByteWriter()
            w.u8(UInt8(ascii: "{"))
            var seen = Set<String>()
            for (i, (k, v)) in metadata.sorted(by: { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) })
                .enumerated() where seen.insert(k).inserted
            {
                if i > 0 { w.u8(UInt8(ascii: ",")) }
                JSONScanner.writeString(k.utf8, into: &w)
                w.u8(UInt8(ascii: ":"))
                JSONScanner.writeString(v.utf8, into: &w)
            }
            w.u8(UInt8(ascii: "}"))
            s.metadata = .text(String(decoding: w.bytes, as: UTF8.self))
        }
        if s.end.microseconds >= s.start.microseconds { samples.append(s) }
        current = nil
    }

    /// Writes `samples` as day files under `raw`, each in every local day (of its start's
    /// offset) that it overlaps, sorted by start. Returns the number of files.
    static func writeDayFiles(_ samples: [Sample], raw: String) throws -> Int {
        var byDay: [String: [Sample]] = [:]
        for s in samples {
            let offset = Int64(s.start.form.offsetMinutes) * 60_000_000
            var day = ISO8601.floorDivide(s.start.microseconds + offset, ISO8601.microsPerDay).0
            let lastDay = ISO8601.floorDivide(
                max(s.end.microseconds - 1, s.start.microseconds) + offset, ISO8601.microsPerDay
            ).0
            while day <= lastDay {
                let (y, m, d) = ISO8601.civil(day)
                byDay[String(format: "%04d-%02d-%02d", y, m, d), default: []].append(s)
                day += 1
            }
        }
        for (date, list) in byDay {
            let dir = raw + "/" + date.prefix(4) + "/" + date.dropFirst(5).prefix(2)
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let bytes = DayFileWriter.dayFile(
                date: date, samples: list.sorted { $0.start.microseconds < $1.start.microseconds })
            try Data(bytes).write(to: URL(fileURLWithPath: dir + "/" + date + ".json"))
        }
        return byDay.count
    }
}
