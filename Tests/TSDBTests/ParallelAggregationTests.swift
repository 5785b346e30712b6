import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// Long aggregates on two cores (pieces cut at bucket boundaries), slots merged as integers per
/// bucket, decoded blocks added a bucket's run at a time, and CSV timestamps from a writer that
/// keeps the last date: each against brute force.
@Suite struct ParallelAggregationTests {
    static let type = SlotSummaryTests.type

    /// 260,000 heart-rate-like samples 1–30 s apart and one in 50 up to two hours after the one
    /// before (262 days from 20 March 2025, across the DST changes of Lord Howe and St John's).
    static let samples = SlotSummaryTests.series(260_000, seed: 21, start: 1_742_428_800_000_000, maxStep: 30)

    /// ``samples`` compacted into a store of their own (the caller cleans the folder up).
    func fixture() throws -> (Store, TemporaryFolder) { try SlotSummaryTests().store(Self.samples) }

    func options(_ zone: String, _ bucket: String, _ stats: [Statistic], fill: Bool = false) throws -> AggregateOptions
    {
        var o = AggregateOptions()
        o.zone = try TimeZoneRules.named(zone)
        o.bucket = try BucketSpec.parse(bucket)
        o.statistics = stats
        o.fill = fill
        return o
    }

    @Test func piecesAreCutAtBucketBoundariesAcrossTheRange() throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        for (zone, bucket) in [("UTC", "day"), ("Asia/Kathmandu", "hour"), ("Australia/Lord_Howe", "week")] {
            // A percentile decodes every sample, so the pieces follow the samples, not the split blocks.
            let o = try options(zone, bucket, [.count, .p50])
            let plan = store.aggregatePlan(Self.type, from: nil, to: nil, options: o)
            let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
            let pieces = try #require(store.parallelPieces(plan, options: o, walker: walker), "\(zone) \(bucket)")
            #expect(pieces.count >= 2 && pieces.count <= AggregatePieces.maximumPieces)
            #expect(pieces.cuts.first == plan.lo && pieces.cuts.last == plan.hi)
            #expect(zip(pieces.cuts, pieces.cuts.dropFirst()).allSatisfy { $0 < $1 })
            for cut in pieces.cuts.dropFirst().dropLast() {
                #expect(walker.bucket(containing: cut).start == cut, "\(zone) \(bucket): cut inside a bucket")
            }
        }
    }

    /// The fixture's 262 days of minutes (377,000 rows) are cut into pieces of at most
    /// `maximumPieceRows` buckets, however many samples they hold.
    @Test func longRangesOfShortBucketsAreCutIntoPiecesOfBoundedRows() throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        for (zone, bucket, width) in [("UTC", "minute", Int64(60)), ("Australia/Lord_Howe", "5m", 300)] {
            let o = try options(zone, bucket, [.count])
            let plan = store.aggregatePlan(Self.type, from: nil, to: nil, options: o)
            let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
            let pieces = try #require(store.parallelPieces(plan, options: o, walker: walker), "\(zone) \(bucket)")
            let span = width * 1_000_000 * Int64(AggregatePieces.maximumPieceRows)
            #expect(pieces.count >= Int((plan.hi - plan.lo) / span))
            #expect(pieces.cuts.first == plan.lo && pieces.cuts.last == plan.hi)
            for (a, b) in zip(pieces.cuts, pieces.cuts.dropFirst()) {
                #expect(a < b && b - a <= span / 2, "\(zone) \(bucket): a piece of \((b - a) / 1_000_000) s")
                #expect(
                    a == plan.lo || walker.bucket(containing: a).start == a, "\(zone) \(bucket): cut inside a bucket")
            }
        }
    }

    /// A stretch longer than the span is cut into (nearly) the fewest parts of at most the span, of
    /// equal length give or take a bucket; one no longer is left whole. Lengths swept around whole
    /// multiples of the span.
    @Test func aStretchTooLongIsCutIntoEqualParts() throws {
        for (zone, bucket) in [("UTC", "minute"), ("Australia/Lord_Howe", "5m"), ("Asia/Kathmandu", "hour")] {
            let spec = try BucketSpec.parse(bucket)
            let width = try #require(spec.shortestSeconds) * 1_000_000
            let span = width * 1_000
            let lo = Self.samples[0].start.microseconds
            for length in [span, span + width, 2 * span - width, 2 * span, 2 * span + width, 7 * span + span / 3] {
                let walker = BucketWalker(spec: spec, zone: try TimeZoneRules.named(zone), from: lo, to: lo + length)
                let cuts = Store.bounded([lo, lo + length], span: span, walker)
                let parts = zip(cuts, cuts.dropFirst()).map { $1 - $0 }
                let context = "\(zone) \(bucket), \(length / width) buckets: \(parts.map { $0 / width })"
                let fewest = Int((length + span - 1) / span)
                #expect(parts.count == fewest || (fewest > 1 && parts.count == fewest + 1), "\(context)")
                #expect(parts.allSatisfy { $0 > 0 && $0 <= span }, "\(context)")
                #expect(parts.max()! - parts.min()! <= 2 * width, "\(context)")
                for cut in cuts.dropFirst().dropLast() {
                    #expect(walker.bucket(containing: cut).start == cut, "\(context): cut inside a bucket")
                }
            }
        }
    }

    /// Blocks answered whole from their summaries cost nothing: a second thread is for ranges with
    /// many samples in blocks that bucket edges split.
    @Test func onlySamplesInSplitBlocksAskForASecondThread() throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        func split(_ bucket: String, _ stats: [Statistic]) throws -> (Int, AggregatePieces?) {
            let o = try options("Australia/Lord_Howe", bucket, stats)
            let plan = store.aggregatePlan(Self.type, from: nil, to: nil, options: o)
            let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
            let pieces = store.parallelPieces(plan, options: o, walker: walker)
            return (try store.splitBlocks(plan, walker: walker).samples, pieces)
        }
        // Every block spans more than a minute; all the samples lie in one year's bucket.
        #expect(try split("minute", [.count]).0 == Self.samples.count)
        #expect(try split("year", [.count]).0 == 0)
        // Weeks split a block every seven days or so: too few samples for a second thread, unless
        // every value is needed.
        let (weekly, pieces) = try split("week", [.count, .max])
        #expect(weekly > 0 && weekly < 2 * AggregatePieces.minimumSamples && pieces == nil)
        #expect(try split("week", [.count, .p50]).1 != nil)
        #expect(try split("hour", [.count, .max]).1 != nil)
    }

    /// A scan that takes whole blocks from their summaries works once per bucket edge inside a block:
    /// the fixture's 262 days stay on one thread though their blocks hold enough samples for two,
    /// its hours take two. The edges are counted as brute force counts them: the bucket boundaries
    /// between each block's first and last start, within the range.
    @Test func fewBucketEdgesInsideBlocksStayOnOneThread() throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        for (bucket, manyEdges) in [("day", false), ("hour", true), ("15m", true)] {
            let o = try options("Australia/Lord_Howe", bucket, [.count, .max])
            let plan = store.aggregatePlan(Self.type, from: nil, to: nil, options: o)
            let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
            var boundaries: [Int64] = []
            var b = walker.bucket(containing: plan.lo)
            while b.end < plan.hi {
                boundaries.append(b.end)
                b = walker.bucket(containing: b.end)
            }
            var expected = 0
            for reader in try store.segments(of: plan.type, from: plan.lo, to: plan.hi) {
                for block in reader.summaries where block.lastStart >= plan.lo && block.firstStart < plan.hi {
                    let (first, last) = (max(block.firstStart, plan.lo), min(block.lastStart, plan.hi - 1))
                    expected += boundaries.filter { $0 > first && $0 <= last }.count
                }
            }
            let split = try store.splitBlocks(plan, walker: walker)
            #expect(split.edges == min(expected, AggregatePieces.minimumEdges), "\(bucket)")
            #expect(split.samples >= 2 * AggregatePieces.minimumSamples, "\(bucket): enough samples for two")
            let pieces = store.parallelPieces(plan, options: o, walker: walker)
            #expect((pieces != nil) == manyEdges, "\(bucket): \(split.edges) edges")
        }
    }

    @Test func smallRangesAndOneBucketStayOnOneThread() throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        func pieces(_ bucket: String, from: Int64? = nil, to: Int64? = nil) throws -> AggregatePieces? {
            var o = try options("UTC", "day", [.count])
            o.bucket = bucket == "none" ? .none : try BucketSpec.parse(bucket)
            let plan = store.aggregatePlan(Self.type, from: from, to: to, options: o)
            let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
            return store.parallelPieces(plan, options: o, walker: walker)
        }
        #expect(try pieces("none") == nil)
        // A day holds fewer than 200,000 samples.
        let day = Self.samples[1000].start.microseconds
        #expect(try pieces("hour", from: day, to: day + 86_400_000_000) == nil)
    }

    @Test(arguments: [
        ("UTC", "day", false), ("Asia/Kathmandu", "hour", false), ("Australia/Lord_Howe", "day", true),
        ("America/St_Johns", "week", false), ("Europe/Paris", "6h", true), ("Europe/Paris", "minute", false),
    ])
    func aggregatesInPiecesEqualABruteForceOracle(zone: String, bucket: String, fill: Bool) throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        let samples = Self.samples
        let stats: [Statistic] = [.count, .min, .max, .mean, .stddev, .first, .last, .p50, .p95]
        let o = try options(zone, bucket, stats, fill: fill)
        let lo = samples[50].start.microseconds
        let hi = samples[259_000].start.microseconds
        let result = try store.aggregate(Self.type, from: lo, to: hi, options: o)
        // Without percentiles only the blocks holding the range's ends (off the quarter-hour grid)
        // are decoded: those a piece's end cuts through are answered from their slots. Minutes
        // are finer than slots: every block is decoded.
        var plain = o
        plain.statistics = [.count, .min, .max, .mean]
        let fromSlots = try store.aggregate(Self.type, from: lo, to: hi, options: plain)
        if bucket != "minute" { #expect(fromSlots.blocksDecoded <= 2 && fromSlots.blocksFromSlots > 0) }
        #expect(fromSlots.rows.map { $0.values[.count] } == result.rows.map { $0.values[.count] })
        #expect(fromSlots.rows.map { $0.values[.max] } == result.rows.map { $0.values[.max] })
        #expect(fromSlots.rows.map { $0.values[.min] } == result.rows.map { $0.values[.min] })
        // Means from summaries add up decimals in another order than sample by sample.
        for (a, b) in zip(fromSlots.rows, result.rows) {
            let (x, y) = (a.values[.mean] ?? .nan, b.values[.mean] ?? .nan)
            #expect(x.isNaN ? y.isNaN : abs(x - y) <= 1e-9 * max(1, abs(y)), "mean at \(a.start): \(x) ≠ \(y)")
        }
        #expect(fromSlots.rows.map(\.start) == result.rows.map(\.start))
        #expect(fromSlots.rows.map(\.end) == result.rows.map(\.end))

        let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: lo, to: hi)
        let (counts, values) = SlotSummaryTests.byBucket(samples, walker, lo: lo, hi: hi)
        let expected = fill ? walker.buckets(from: lo, to: hi).map(\.start) : counts.keys.sorted()
        #expect(result.rows.map(\.start) == expected)
        for row in result.rows {
            let v = values[row.start] ?? []
            #expect(row.values[.count] == Double(counts[row.start] ?? 0))
            guard v.count > 1 else { continue }
            let mean = v.reduce(0, +) / Double(v.count)
            let sd = (v.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(v.count - 1)).squareRoot()
            #expect(row.values[.min] == v.min() && row.values[.max] == v.max())
            #expect(row.values[.first] == v.first && row.values[.last] == v.last)
            #expect(abs(row.values[.mean]! - mean) <= 1e-9 * max(1, mean))
            #expect(abs(row.values[.stddev]! - sd) <= 1e-9 * max(1, sd))
            let sorted = v.sorted()
            for (s, q) in [(Statistic.p50, 0.5), (.p95, 0.95)] {
                let position = q * Double(sorted.count - 1)
                let i = Int(position)
                let fraction = position - Double(i)
                let p = i + 1 < sorted.count ? sorted[i] + (sorted[i + 1] - sorted[i]) * fraction : sorted[i]
                #expect(row.values[s] == p, "\(s) of the bucket at \(row.start)")
            }
        }
    }

    /// Rows as text, for the bytes form of an aggregate.
    struct RowText: AggregateRowFormatter {
        mutating func append(_ row: AggregateRow, to bytes: inout [UInt8]) {
            bytes += Array("\(row.start),\(row.values[.count] ?? -1),\(row.values[.max] ?? -1)\n".utf8)
        }
    }

    @Test(arguments: ["day", "hour", "15m"])
    func bytesFormattedInPiecesComeOutInTheRowsOrder(bucket: String) throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        // Days are too few edges for two threads from summaries alone; a percentile decodes them all.
        let o = try options("Asia/Kathmandu", bucket, bucket == "day" ? [.count, .max, .p50] : [.count, .max])
        let plan = store.aggregatePlan(Self.type, from: nil, to: nil, options: o)
        let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
        #expect(store.parallelPieces(plan, options: o, walker: walker) != nil)
        var expected: [UInt8] = []
        var text = RowText()
        for row in try store.aggregate(Self.type, options: o).rows { text.append(row, to: &expected) }
        var written: [UInt8] = []
        var headers = 0
        _ = try store.aggregate(
            Self.type, options: o,
            header: { _ in
                headers += 1
                return RowText()
            }, write: { written += $0 })
        #expect(headers == 1)
        #expect(written == expected)
    }

    /// The command line formats a long aggregate's pieces of statistics from the columns their
    /// sweeps lay out (``AggregateRowColumns``); on one thread it formats rows as they come: the
    /// text is the same, byte for byte, in every format, whichever statistics and in any order.
    @Test(arguments: [
        ("UTC", "15m", "count,min,max,mean"), ("Australia/Lord_Howe", "hour", "mean,count"),
        ("Asia/Kathmandu", "minute", "max,min,sum"), ("America/St_Johns", "45m", "count,p50,stddev"),
    ])
    func commandLineTextFromColumnsEqualsTextFromRows(zone: String, bucket: String, stats: String) throws {
        let (_, folder) = try fixture()
        defer { folder.cleanup() }
        for format in bucket == "minute" ? ["csv"] : ["csv", "ndjson", "json", "markdown", "table"] {
            let query = [
                "query", Self.type, "--bucket", bucket, "--tz", zone, "--stats", stats, "--format", format,
                "--store", folder.path,
            ]
            let rows = try tsdbShell(query + ["--threads", "1"])
            let columns = try tsdbShell(query + ["--timings"])
            #expect(rows.status == 0 && columns.status == 0, "\(rows.stderr)\(columns.stderr)")
            #expect(columns.stderr.contains("pieces on 2 threads"), "\(columns.stderr)")
            #expect(rows.stdout.split(separator: "\n").count > 1_000)
            #expect(rows.stdout == columns.stdout, "\(format) text differs")
        }
    }

    // MARK: - Slots merged as integers

    /// A stored slot computed straight from its mantissas.
    func slot(_ mantissas: [Int64], number: Int64, valueless: Int = 0) -> StoredSlot {
        var s = StoredSlot(number: number, samples: mantissas.count + valueless, values: mantissas.count)
        guard let low = mantissas.min(), let high = mantissas.max() else { return s }
        s.minimum = low
        s.range = UInt64(high - low)
        s.deviations = mantissas.reduce(0) { $0 + UInt64($1 - low) }
        s.squares = mantissas.reduce(0) { $0 + UInt64($1 - low) * UInt64($1 - low) }
        return s
    }

    @Test func absorbedSlotsEqualOneSlotOfAllTheirValues() {
        var rng = SplitMix64(seed: 5)
        for round in 0..<300 {
            let spread = [Int64(3), 400, 1 << 20][round % 3]
            let base = Int64.random(in: -(1 << 40)...(1 << 40), using: &rng)
            var all: [Int64] = []
            var merged: StoredSlot?
            for k in 0..<Int.random(in: 1...8, using: &rng) {
                let n = Int.random(in: 0...20, using: &rng)
                let group = (0..<n).map { _ in base + Int64.random(in: 0...spread, using: &rng) }
                let valueless = Int.random(in: 0...2, using: &rng)
                let next = slot(group, number: Int64(k), valueless: valueless + (n == 0 ? 1 : 0))
                all += group
                if merged == nil {
                    merged = next
                } else {
                    let absorbed = merged!.absorb(next)
                    #expect(absorbed, "round \(round)")
                }
            }
            var expected = slot(all, number: 0)
            expected.samples = merged!.samples
            #expect(merged == expected, "round \(round)")
        }
    }

    @Test func absorbingPast64BitsChangesNothing() {
        var a = slot([0, 1 << 31], number: 0)
        let b = slot([-(1 << 52), -(1 << 52) + 1], number: 1)
        let before = a
        let absorbed = a.absorb(b)
        #expect(!absorbed)
        #expect(a == before)
    }

    @Test func slotTotalsAreTheCountsExtremesAndSumOfTheirValues() throws {
        var rng = SplitMix64(seed: 12)
        for round in 0..<300 {
            let spread = [Int64(3), 400, 1 << 20][round % 3]
            let base = Int64.random(in: -(1 << 40)...(1 << 40), using: &rng)
            var slots: [StoredSlot] = []
            var values: [[Int64]] = []
            for k in 0..<Int.random(in: 1...8, using: &rng) {
                let n = Int.random(in: 0...20, using: &rng)
                values.append((0..<n).map { _ in base + Int64.random(in: 0...spread, using: &rng) })
                let valueless = Int.random(in: 0...2, using: &rng) + (n == 0 ? 1 : 0)
                slots.append(slot(values[k], number: Int64(k), valueless: valueless))
            }
            let first = Int.random(in: 0..<slots.count, using: &rng)
            let range = first..<Int.random(in: (first + 1)...slots.count, using: &rng)
            let all = values[range].flatMap { $0 }
            let summary = try #require(SlotTotals.summary(slots, range, scale: 0))
            #expect(summary.sampleCount == slots[range].reduce(0) { $0 + $1.samples }, "round \(round)")
            #expect(summary.valueCount == all.count && summary.sum == Double(all.reduce(0, +)), "round \(round)")
            #expect(summary.minValue == all.min().map(Double.init) ?? .infinity, "round \(round)")
            #expect(summary.maxValue == all.max().map(Double.init) ?? -.infinity, "round \(round)")
            // At a scale, each figure is its mantissa over the scale's power of ten.
            let scaled = try #require(SlotTotals.summary(slots, range, scale: 2))
            #expect(scaled.minValue == all.min().map { Double($0) / 100 } ?? .infinity, "round \(round)")
            #expect(scaled.maxValue == all.max().map { Double($0) / 100 } ?? -.infinity, "round \(round)")
            #expect(scaled.sum == Double(all.reduce(0, +)) / 100, "round \(round)")
            #expect(scaled.sampleCount == summary.sampleCount && scaled.valueCount == all.count, "round \(round)")
        }
        // Sums past 64 bits are left to the merge that can split them.
        let huge = slot([1 << 52, 1 << 52], number: 0)
        #expect(SlotTotals.summary(Array(repeating: huge, count: 1100), 0..<1100, scale: 0) == nil)
    }

    /// Without the standard deviation, slots merge by their totals alone: the rows are the same,
    /// to the last bit, as when the spread is kept.
    @Test(arguments: [("UTC", "hour"), ("Asia/Kathmandu", "day"), ("Australia/Lord_Howe", "90m")])
    func slotsMergedWithoutTheSpreadGiveTheSameRows(zone: String, bucket: String) throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        let plain = try options(zone, bucket, [.count, .sum, .min, .max, .mean])
        var spread = plain
        spread.statistics = plain.statistics! + [.stddev]
        let a = try store.aggregate(Self.type, options: plain)
        let b = try store.aggregate(Self.type, options: spread)
        #expect(a.blocksFromSlots > 0 && a.blocksFromSlots == b.blocksFromSlots)
        #expect(a.rows.count == b.rows.count && a.rows.count > 100)
        for (x, y) in zip(a.rows, b.rows) {
            #expect(x.start == y.start && x.end == y.end)
            for s in plain.statistics! { #expect(x.values[s] == y.values[s], "\(s) of the bucket at \(x.start)") }
        }
    }

    // MARK: - Decoded blocks a bucket's run at a time

    /// `samples` written as one lz4 block in a segment file (in the folder returned, for the
    /// caller to clean up), and that block decoded for its values.
    static func decodedValues(_ samples: [Sample]) throws -> (TemporaryFolder, SegmentReader, DecodedBlock) {
        let folder = TemporaryFolder("values")
        folder.write(bytes: encodeSegment(samples, blockSamples: samples.count, codec: .lz4), to: "x.seg")
        do {
            let reader = try SegmentReader(path: folder.path + "/x.seg")
            let block = DecodedBlock()
            try reader.decode(block: 0, into: block, columns: .values)
            return (folder, reader, block)
        } catch {
            folder.cleanup()
            throw error
        }
    }

    @Test func runsOfADecodedBlockAddUpAsOneByOne() throws {
        var samples = SlotSummaryTests.series(600, seed: 8)
        for i in stride(from: 7, to: 600, by: 97) {
            samples[i].value = .numberText("1.5e2")
        }
        let (folder, reader, block) = try Self.decodedValues(samples)
        defer { folder.cleanup() }
        var rng = SplitMix64(seed: 9)
        for keep in [false, true] {
            var runs = Accumulator()
            var each = Accumulator()
            var i = 0
            while i < block.count {
                let j = min(block.count, i + Int.random(in: 1...90, using: &rng))
                runs.add(block, i..<j, in: reader, keepValues: keep, spread: true)
                i = j
            }
            for k in 0..<block.count {
                let tag = UInt8(truncatingIfNeeded: block.valueTags[k])
                guard let v = block.value(at: k, in: reader) else {
                    each.addValueless()
                    continue
                }
                if keep && tag >= ValueTag.decimalBase {
                    each.add(v, mantissa: block.mantissas[k], scale: tag - ValueTag.decimalBase)
                } else {
                    each.add(v, keepValue: keep)
                }
            }
            for s in Statistic.allCases where keep || s.quantile == nil {
                let a = runs.value(s, cumulativeSum: nil, style: .discreteArithmetic)
                let b = each.value(s, cumulativeSum: nil, style: .discreteArithmetic)
                #expect(a == b, "\(s), values kept: \(keep)")
            }
        }
    }

    /// Blocks of whole numbers (one value tag) are added in integers; every running figure must
    /// come out with the same bits as adding the values one by one, and the integers must not be
    /// used where they could not be exact (values or sums near 2^52, a running sum with a fraction).
    /// The search for a bucket's end in a decoded block against a linear scan, over every start,
    /// end and limit of small ascending arrays with repeats.
    @Test func bucketEndSearchMatchesALinearScan() {
        var rng = SplitMix64(seed: 31)
        for length in [1, 2, 3, 7, 40, 130] {
            var t: Int64 = 0
            let starts = (0..<length).map { _ in
                t += Int64.random(in: 0...3, using: &rng)
                return t
            }
            starts.withUnsafeBufferPointer { p in
                for from in 1...length {
                    for to in from...length {
                        for limit in -1...(t + 2) {
                            var linear = from
                            while linear < to && starts[linear] < limit { linear += 1 }
                            let found = p.firstIndex(from: from, to: to, notBelow: limit)
                            if found != linear {
                                Issue.record("\(length) starts, \(from)..<\(to) below \(limit): \(found) ≠ \(linear)")
                                return
                            }
                        }
                    }
                }
            }
        }
    }

    static let wholeNumberCases: [(ClosedRange<Int64>, Double)] = {
        let big: Int64 = 1 << 40
        let edge: Int64 = 1 << 51
        let beyond: Int64 = 1 << 53
        return [
            (40...200, 0), (-5_000...5_000, 0), (0...0, 0), (big...big + 100, 0), (edge...2 * edge + 10, 0),
            (40...200, 0.5), (-beyond...beyond, 0),
        ]
    }()

    @Test(arguments: wholeNumberCases)
    func wholeNumberRunsAddUpBitForBit(values: ClosedRange<Int64>, before: Double) throws {
        let samples = SlotSummaryTests.series(700, seed: 21).enumerated().map { i, s -> Sample in
            var s = s
            var rng = SplitMix64(seed: UInt64(i))
            s.value = .decimal(ExactDecimal(mantissa: Int64.random(in: values, using: &rng), scale: 0))
            return s
        }
        let (folder, reader, block) = try Self.decodedValues(samples)
        defer { folder.cleanup() }
        #expect(block.uniformValueTag == ValueTag.decimalBase)
        var rng = SplitMix64(seed: 22)
        for spread in [true, false] {
            var (runs, each) = (Accumulator(), Accumulator())
            if before != 0 {
                runs.add(before, keepValue: false)
                each.add(before, keepValue: false)
            }
            var i = 0
            while i < block.count {
                let j = min(block.count, i + Int.random(in: 1...200, using: &rng))
                runs.add(block, i..<j, in: reader, keepValues: false, spread: spread)
                i = j
            }
            for k in 0..<block.count { each.add(Double(block.mantissas[k]), keepValue: false) }
            func bits(_ a: Accumulator) -> [UInt64?] {
                var figures = [a.sum, a.minimum, a.maximum, a.first, a.last].map { $0?.bitPattern }
                if spread { figures += [a.shiftedSum, a.shiftedSquares, a.reference].map { $0?.bitPattern } }
                return figures + [UInt64(a.count), UInt64(a.valueCount)]
            }
            #expect(bits(runs) == bits(each), "values \(values), \(before) before, spread \(spread)")
        }
    }

    // MARK: - Pieces in order on two threads

    /// Busy work of a random length (up to ~50 µs), so the two threads interleave differently.
    static func spin(_ seed: Int) {
        var x = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15
        for _ in 0..<(x % 20_000) { x = x &* 6_364_136_223_846_793_005 &+ 1 }
        if x == 42 { print("") }
    }

    @Test func piecesComeOutInOrderHoweverTheThreadsInterleave() throws {
        for round in 0..<200 {
            let count = 1 + round % 37
            var out: [Int] = []
            var streamed = 0
            try InOrderPieces.run(
                count: count,
                stream: { i in
                    Self.spin(i &* 31 &+ round)
                    out.append(i)
                    streamed += 1
                },
                hold: { i in
                    Self.spin(i &* 17 &+ round)
                    return i
                },
                handOut: { out.append($0) })
            #expect(out == Array(0..<count), "round \(round)")
            #expect(streamed >= 1, "the first piece always streams")
        }
    }

    /// While the calling thread is slow to hand pieces out (a pager reading its output), the other
    /// thread stops after `maximumWaiting` finished pieces instead of holding every row.
    @Test func theOtherThreadWaitsWhileItsFinishedPiecesAreNotOut() throws {
        let caller = pthread_self()
        let waiting = Locked((now: 0, most: 0))
        var out: [Int] = []
        try InOrderPieces.run(
            count: 40,
            stream: { i in
                if i == 0 { usleep(50_000) }
                out.append(i)
            },
            hold: { i in
                if pthread_equal(pthread_self(), caller) == 0 {
                    waiting.withLock { w in
                        w.now += 1
                        w.most = max(w.most, w.now)
                    }
                    return (i, true)
                }
                return (i, false)
            },
            handOut: { kept in
                if kept.1 { waiting.withLock { $0.now -= 1 } }
                out.append(kept.0)
            })
        #expect(out == Array(0..<40))
        // The piece being handed out counts here until its handOut returns, though the other
        // thread may already have taken the next one: one more than the bound.
        let most = waiting.withLock { $0.most }
        #expect(most >= 1 && most <= InOrderPieces.maximumWaiting + 1, "\(most) pieces of the other thread waited")
    }

    @Test func aFailedPieceStopsTheRestAndThrowsOnceTheOtherThreadIsIdle() {
        for round in 0..<100 {
            let count = 2 + round % 19
            let failing = round % count
            let busy = Locked(0)
            var out: [Int] = []
            #expect(throws: TSDBError.self, "round \(round)") {
                try InOrderPieces.run(
                    count: count,
                    stream: { (i) throws(TSDBError) in
                        if i == failing { throw TSDBError.invalidInput("piece \(i)") }
                        out.append(i)
                    },
                    hold: { (i) throws(TSDBError) -> Int in
                        busy.withLock { $0 += 1 }
                        defer { busy.withLock { $0 -= 1 } }
                        Self.spin(i &+ round)
                        if i == failing { throw TSDBError.invalidInput("piece \(i)") }
                        return i
                    },
                    handOut: { out.append($0) })
            }
            #expect(busy.withLock { $0 } == 0, "the other thread was still on a piece")
            #expect(out == Array(0..<out.count) && out.count <= failing, "round \(round): \(out)")
        }
    }

    /// `tsdb query`'s CSV, NDJSON and JSON of a long aggregate (rows made on two threads, JSON's
    /// first comma dropped by the printer) hold the library's rows, and an empty range is `[]`.
    @Test(arguments: ["csv", "ndjson", "json"])
    func theCommandLinesLongOutputsHoldTheLibrarysRows(format: String) throws {
        let (store, folder) = try fixture()
        defer { folder.cleanup() }
        let zone = "Australia/Lord_Howe"
        let o = try options(zone, "hour", [.count, .max, .mean])
        let plan = store.aggregatePlan(Self.type, from: nil, to: nil, options: o)
        let walker = BucketWalker(spec: o.bucket, zone: o.zone, from: plan.lo, to: plan.hi)
        #expect(store.parallelPieces(plan, options: o, walker: walker) != nil)
        let rows = try store.aggregate(Self.type, options: o).rows
        let args = [
            "query", Self.type, "--bucket", "hour", "--tz", zone, "--stats", "count,max,mean", "--store", folder.path,
        ]
        let run = try tsdbShell(args + ["--format", format])
        #expect(run.status == 0, "\(run.stderr)")
        // Each row as (start, count, max, mean) texts.
        var printed: [[String]] = []
        if format == "csv" {
            let lines = run.stdout.split(separator: "\n")
            #expect(lines.first == "start,end,count,max,mean")
            printed = lines.dropFirst().map { line in
                let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                return [cells[0], cells[2], cells[3], cells[4]]
            }
        } else {
            let objects: [Any] =
                format == "json"
                ? try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [Any])
                : try run.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) }
            printed = objects.map { object in
                let o = object as? [String: Any] ?? [:]
                return [o["start"] as? String ?? "", "\(o["count"] ?? "")", "\(o["max"] ?? "")", "\(o["mean"] ?? "")"]
            }
        }
        #expect(printed.count == rows.count && rows.count > 1000)
        for (cells, row) in zip(printed, rows) {
            #expect(cells[0] == localTimestamp(row.start, o.zone))
            #expect(Int(cells[1]) == Int(row.values[.count]!) && Double(cells[2]) == row.values[.max])
            #expect(Double(cells[3]) == row.values[.mean], "mean of the bucket at \(cells[0])")
        }
        if format == "json" {
            let empty = try tsdbShell(args + ["--format", format, "--range", "2030-01-01..2030-01-02"])
            #expect(empty.status == 0 && empty.stdout == "[]\n")
        }
    }

    // MARK: - Timestamps for long outputs

    /// Day after day the writer steps its date on (months, leap years, centuries, and the offsets
    /// that change); each must be what ``localTimestamp(_:_:)`` says.
    @Test func theTimestampWriterWritesDayAfterDay() throws {
        for name in ["UTC", "Europe/Paris", "America/St_Johns", "Australia/Lord_Howe"] {
            let zone = try TimeZoneRules.named(name)
            var writer = LocalTimestampWriter(zone)
            var offsets = OffsetCache(zone)
            // 1895-01-01 to 2105-12-31, then the last days a four-digit year shows.
            for day in Array(Int64(-27_393)...Int64(49_672)) + Array(Int64(2_932_801)...Int64(2_932_896)) {
                let t = offsets.startOfDay(day)
                var bytes: [UInt8] = []
                writer.append(t, to: &bytes)
                guard String(decoding: bytes, as: UTF8.self) == localTimestamp(t, zone) else {
                    Issue.record(
                        "\(name) day \(day): \(String(decoding: bytes, as: UTF8.self)), not \(localTimestamp(t, zone))")
                    return
                }
            }
        }
    }

    /// The next date is written only over a `YYYY-MM-DD` date of four digits: any other text, or a
    /// next day in year 10000, is left to the full writer.
    @Test func aDateIsSteppedOnlyOverFourDigitYears() {
        func words(_ s: String) -> (UInt64, UInt64, UInt64, UInt64) {
            var w: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &w) { $0.copyBytes(from: Array(s.utf8)) }
            return w
        }
        func next(_ s: String) -> String? {
            guard var w = ISO8601.followingDate(in: words(s)) else { return nil }
            return withUnsafeBytes(of: &w) { String(decoding: $0.prefix(s.utf8.count), as: UTF8.self) }
        }
        #expect(next("2024-02-28T00:00:00+01:00") == "2024-02-29T00:00:00+01:00")
        #expect(next("2100-02-28T00:00:00-03:30") == "2100-03-01T00:00:00-03:30")
        #expect(next("1999-12-31T00:00:00+00:00") == "2000-01-01T00:00:00+00:00")
        #expect(next("0000-01-09T00:00:00+00:00") == "0000-01-10T00:00:00+00:00")
        for text in [
            "9999-12-31T00:00:00+00:00", "-001-12-31T00:00:00+00:00", "20:4-01-01T00:00:00+00:00",
            "2/24-01-01T00:00:00+00:00", "2024/01-01T00:00:00+00:00", "2024-01/01T00:00:00+00:00",
        ] {
            #expect(next(text) == nil, "\(text)")
        }
    }

    /// Every second of a day, written into a template whose other bytes must stay as they are.
    @Test func everyTimeOfDayIsWrittenInPlace() {
        let template = Array("2025-03-30T99:99:99+02:00".utf8) + Array(repeating: UInt8(ascii: "#"), count: 7)
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: template) }
        for second in UInt64(0)..<86_400 {
            var set = ISO8601.settingTimeOfDay(second, in: words)
            let text = withUnsafeBytes(of: &set) { Array($0) }
            let (h, m, s) = (second / 3600, second / 60 % 60, second % 60)
            func two(_ v: UInt64) -> String { v < 10 ? "0\(v)" : "\(v)" }
            let expected = Array("2025-03-30T\(two(h)):\(two(m)):\(two(s))+02:00".utf8) + template.suffix(7)
            guard text == expected else {
                Issue.record("\(second): \(String(decoding: text, as: UTF8.self))")
                return
            }
        }
    }

    @Test func theTimestampWriterWritesWhatLocalTimestampSays() throws {
        var rng = SplitMix64(seed: 3)
        for name in ["UTC", "Europe/Paris", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe"] {
            let zone = try TimeZoneRules.named(name)
            var writer = LocalTimestampWriter(zone)
            // Random instants from 1890 (local mean times with seconds) to 2060, then hours in order.
            var instants = (0..<500).map { _ in
                Int64.random(in: -2_524_521_600...2_871_763_200, using: &rng) * 1_000_000
            }
            instants += (0..<3000).map { 1_742_428_800_000_000 + Int64($0) * 900_000_000 }
            // In order across each change of offset from 1990 to 2040, to the microsecond: the
            // writer reuses a date and offset over the instants it knows share them.
            var change = zone.nextTransition(after: 631_152_000)
            while let c = change, c < 2_208_988_800 {
                instants += [-86_400_000_001, -1_000_001, -1, 0, 1, 999_999, 3_600_000_000].map { c * 1_000_000 + $0 }
                change = zone.nextTransition(after: c)
            }
            instants += (0..<400).map { _ in
                Int64.random(in: -2_524_521_600_000_000...2_871_763_200_000_000, using: &rng)
            }
            for t in instants {
                var bytes: [UInt8] = []
                writer.append(t, to: &bytes)
                #expect(String(decoding: bytes, as: UTF8.self) == localTimestamp(t, zone), "\(name) at \(t)")
            }
        }
    }
}
