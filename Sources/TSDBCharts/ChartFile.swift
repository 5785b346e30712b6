import TSDB

/// Writing a chart file: atomically, and never over a file tsdb plot did not write.
public enum ChartFile {
    public static func write(_ bytes: [UInt8], to path: String) throws(TSDBError) {
        if let existing = FileSystem.contents(of: path) {
            guard isOurs(existing) else {
                throw TSDBError.invalidInput(
                    "exists and was not written by tsdb plot; choose another name or remove it", path: path)
            }
        } else if FileSystem.exists(path) {
            throw TSDBError.invalidInput("exists and cannot be read; choose another name", path: path)
        }
        try FileSystem.writeAtomically(bytes, to: path)
    }

    /// An SVG with the generator mark in its `<desc>`, or a PNG with the mark's `tEXt` chunk.
    static func isOurs(_ bytes: [UInt8]) -> Bool {
        let head = bytes.prefix(4096)
        let mark = Array(
            (bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) ? PNGRenderer.softwareText : Chart.generatorMark).utf8)
        guard head.count >= mark.count else { return false }
        return (0...(head.count - mark.count)).contains { i in head[i..<i + mark.count].elementsEqual(mark) }
    }
}
