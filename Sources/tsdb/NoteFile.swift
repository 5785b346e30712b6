import TSDB

/// Files tsdb writes into a person's notes: never over a file it did not write (the file must
/// contain `owned`), only when the content changed, atomically (the engine's temporary file,
/// fsync, rename).
enum NoteFile {
    enum Outcome: Equatable {
        case written, unchanged
        case notOurs(String)
    }

    static func write(_ text: String, to path: String, owned marker: String, force: Bool) throws -> Outcome {
        let bytes = Array(text.utf8)
        if FileSystem.exists(path) {
            // A file that cannot be read cannot be shown to be ours.
            guard let existing = FileSystem.contents(of: path) else { return .notOurs(path) }
            if existing == bytes { return .unchanged }
            if !force && !String(decoding: existing, as: UTF8.self).contains(marker) { return .notOurs(path) }
        }
        try FileSystem.makeDirectories(FileSystem.parentDirectory(path))
        try FileSystem.writeAtomically(bytes, to: path)
        return .written
    }
}
