import Foundation
import Testing

@testable import TSDB

/// The day files a full rebuild parses ahead of its merge (``ParseStream``).
@Suite struct ParseStreamTests {
    /// What one file parses to, compared by its samples (as text: every field), content hash and months.
    struct Parsed: Equatable {
        var samples: String
        var contentHash: UInt64
        var months: [MonthIndex]
        var failure: String?

        init(_ result: Result<ParsedDayFile, TSDBError>) {
            switch result {
            case .success(let p):
                (samples, contentHash, months, failure) = ("\(p.samples)", p.contentHash, p.months, nil)
            case .failure(let e): (samples, contentHash, months, failure) = ("", 0, [], e.description)
            }
        }
    }

    static func dayFiles(_ folder: TemporaryFolder, days: Int) throws -> [RawFile] {
        try generate(folder.path, days: days, seed: 31)
        // One broken file among them: its failure comes back in its place.
        let files = try RawFileDiscovery.find(rawDirectory: folder.path + "/raw").files
        try Data("{\"date\":".utf8).write(to: URL(fileURLWithPath: files[days / 2].absolutePath))
        return files
    }

    /// Taken in order, every file's result is the one parsing it alone gives, whatever the number of
    /// threads and how far ahead they may run.
    @Test(arguments: [(1, 1), (2, 1), (2, 3), (3, 32)])
    func resultsComeInOrderAsParsedAlone(threads: Int, ahead: Int) throws {
        let folder = TemporaryFolder("parse-stream")
        defer { folder.cleanup() }
        let files = try Self.dayFiles(folder, days: 24)
        let buffers = Pool<ReadBuffer>()
        var options = CompactionOptions()
        options.threads = threads
        let stream = ParseStream(files, threads: threads, ahead: ahead, options: options, buffers: buffers)
        defer { stream.stop() }
        for (i, file) in files.enumerated() {
            let alone = Compactor.parse(file, alone: true, options: options, buffers: buffers)
            #expect(Parsed(stream.take(i)) == Parsed(alone), "\(file.relativePath)")
        }
    }

    /// The workers run at most `ahead` files past those taken; a run that stops early (a failed
    /// merge) leaves parsed files untaken, and stopping ends the workers, after which the stream
    /// goes without trapping (libdispatch traps on a semaphore freed below its initial value).
    @Test(arguments: [0, 1, 5])
    func workersStayWithinTheirRoomAndStop(taken: Int) throws {
        let folder = TemporaryFolder("parse-stream-stop")
        defer { folder.cleanup() }
        let files = try Self.dayFiles(folder, days: 20)
        let ahead = 4
        var stream: ParseStream? = ParseStream(
            files, threads: 2, ahead: ahead, options: CompactionOptions(), buffers: Pool<ReadBuffer>())
        for i in 0..<taken { _ = stream!.take(i) }
        let deadline = ContinuousClock.now + .seconds(10)
        while stream!.claimed < taken + ahead && ContinuousClock.now < deadline { usleep(1000) }
        usleep(20_000)  // time to run past the room, were they able to
        #expect(stream!.claimed == taken + ahead)
        stream!.stop()
        // Each worker claims at most once more to see the stop, and lets the other do the same.
        #expect(stream!.claimed <= taken + ahead + 4)
        stream = nil
    }
}
