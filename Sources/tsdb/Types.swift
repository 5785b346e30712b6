import ArgumentParser
import TSDB

struct Types: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the stored sample types.")

    @OptionGroup var storeOption: StoreOption

    func run() throws {
        let store = try storeOption.open()
        let rows = store.types.map { t in
            [TypeNames.shortName(t.type), formatCount(t.sampleCount), day(t.firstStart), day(t.lastStart), t.type]
        }
        print(renderTable(["type", "samples", "first", "last", "identifier"], rows), terminator: "")
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Storage figures per type: samples, segments, bytes, bytes per sample.")

    @OptionGroup var storeOption: StoreOption

    func run() throws {
        let store = try storeOption.open()
        let types = store.types
        var rows = types.map { t in
            [TypeNames.shortName(t.type), formatCount(t.sampleCount), day(t.firstStart), day(t.lastStart),
             String(t.segmentCount), formatBytes(t.bytes), fixed(t.bytesPerSample, 2)]
        }
        let samples = types.reduce(0) { $0 + $1.sampleCount }, bytes = types.reduce(0) { $0 + $1.bytes }
        rows.append(["total", formatCount(samples), "", "", String(types.reduce(0) { $0 + $1.segmentCount }), formatBytes(bytes),
                     fixed(samples == 0 ? 0 : Double(bytes) / Double(samples), 2)])
        print(renderTable(["type", "samples", "first", "last", "segments", "bytes", "bytes/sample"], rows), terminator: "")
        let raw = store.manifest.rawFiles.reduce(0) { $0 + $1.size }
        print("raw JSON: \(formatCount(store.manifest.rawFiles.count)) day files, \(formatBytes(raw)); store is \(fixed(bytes == 0 ? 0 : Double(raw) / Double(bytes), 1))× smaller")
    }
}

func day(_ micros: Int64) -> String {
    String(Timestamp(microseconds: micros, form: .zulu).description.prefix(10))
}
