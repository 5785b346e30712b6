import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A block's values added up a bucket at a time from its start and value columns
/// (SegmentReader.addUpByBucket) against brute force over the decoded block.
@Suite struct BucketTotalsTests {
    /// What `addUpByBucket` handed back: each run's first start and totals, in order.
    struct Runs: Equatable, CustomStringConvertible {
        var starts: [Int64] = []
        var totals: [ValueTotals] = []
        var description: String { "\(starts.count) runs from \(starts.first.map(String.init) ?? "none")" }
    }

    /// Buckets of `width` µs on a grid from 0 (on or off the slot grid as the width is).
    static func bucketEnd(_ t: Int64, width: Int64) -> Int64 { (t / width + 1) * width }

    static func read(_ reader: SegmentReader, block b: Int, width: Int64, scratch: DecodedBlock) throws -> Runs? {
        var runs = Runs()
        var called = false
        let served = try reader.addUpByBucket(
            block: b, scratch: scratch,
            bucketEnd: { start in
                called = true
                runs.starts.append(start)
                return bucketEnd(start, width: width)
            },
            add: { runs.totals.append($0) })
        #expect(served || !called && runs.totals.isEmpty, "a block not served must feed nothing")
        return served ? runs : nil
    }

    /// The decoded block's samples grouped by bucket, each group's first start and totals.
    static func bruteForce(_ block: DecodedBlock, width: Int64) -> Runs {
        var runs = Runs()
        var end = Int64.min
        for i in 0..<block.count {
            let (t, v) = (block.starts[i], block.mantissas[i])
            if t >= end {
                runs.starts.append(t)
                runs.totals.append(ValueTotals())
                end = bucketEnd(t, width: width)
            }
            runs.totals[runs.totals.count - 1].add(v)
        }
        return runs
    }

    @Test(arguments: [(BlockCodec.none, 300, Int64(5)), (.lz4, 1000, 90), (.zstd, 4096, 240), (.lz4, 700, 20)])
    func runsEqualTheDecodedBlockBucketByBucket(codec: BlockCodec, blockSamples: Int, maxStep: Int64) throws {
        let samples = SideTotalsTests.wholeNumbers(6000, seed: UInt64(blockSamples), maxStep: maxStep)
        let (reader, folder) = try SideTotalsTests().segment(samples, blockSamples: blockSamples, codec: codec)
        defer { folder.cleanup() }
        let (block, scratch) = (DecodedBlock(), DecodedBlock())
        // 7.5 s (finer than some steps, and edges between the block's whole seconds), a minute, a quarter
        // hour, 47 minutes (off the slot grid), an hour, and a day (one edge or none in a block).
        for width: Int64 in [7.5, 60, 900, 2820, 3600, 86_400].map({ Int64($0 * 1_000_000) }) {
            for b in 0..<reader.blockCount {
                try reader.decode(block: b, into: block)
                let expected = Self.bruteForce(block, width: width)
                #expect(try Self.read(reader, block: b, width: width, scratch: scratch) == expected, "block \(b)")
            }
        }
    }

    @Test func blocksWithFractionsOrValuelessSamplesAreLeftToTheDecoder() throws {
        // SlotSummaryTests' series: values with 0–3 fraction digits, every 11th without a value.
        let (reader, folder) = try SideTotalsTests().segment(
            SlotSummaryTests.series(3000, seed: 5), blockSamples: 500, codec: .lz4)
        defer { folder.cleanup() }
        let scratch = DecodedBlock()
        for b in 0..<reader.blockCount {
            #expect(try Self.read(reader, block: b, width: 3_600_000_000, scratch: scratch) == nil)
        }
    }

    /// Heart rates moved up, or down and negated, past 2^31: their sums could leave a Double's exact
    /// integers, so the decoder takes them, as it takes a column whose headers cannot bound its values.
    @Test(arguments: [Int64(1) << 31, -(Int64(1) << 31) - 200])
    func valuesThatMayReachTwoToTheThirtyFirstAreLeftToTheDecoder(shift: Int64) throws {
        let samples = SideTotalsTests.wholeNumbers(600, seed: 4, maxStep: 30).map { s -> Sample in
            var s = s
            guard case .decimal(let d) = s.value else { return s }
            s.value = .decimal(ExactDecimal(mantissa: d.mantissa + shift, scale: 0))
            return s
        }
        let (reader, folder) = try SideTotalsTests().segment(samples, blockSamples: 600, codec: .none)
        defer { folder.cleanup() }
        for b in 0..<reader.blockCount {
            #expect(try Self.read(reader, block: b, width: 3_600_000_000, scratch: DecodedBlock()) == nil)
        }
    }

    @Test func aDamagedBlockIsAnErrorNamingTheFile() throws {
        var bytes = encodeSegment(
            SideTotalsTests.wholeNumbers(2000, seed: 9, maxStep: 10), blockSamples: 500, codec: .none)
        bytes[SegmentFormat.headerSize + 40] ^= 0x10
        let folder = TemporaryFolder("bucket-totals-damage")
        defer { folder.cleanup() }
        folder.write(bytes: bytes, to: "x.seg")
        let reader = try SegmentReader(path: folder.path + "/x.seg")
        #expect {
            _ = try Self.read(reader, block: 0, width: 3_600_000_000, scratch: DecodedBlock())
        } throws: { error in
            let e = error as? TSDBError
            return e?.kind == .corruption && e!.description.contains("x.seg") && e!.description.contains("CRC")
        }
    }

    /// Hours and quarter hours over samples every 2 minutes on average (blocks too sparse for slot
    /// summaries): blocks are added up bucket by bucket, and every row equals brute force over the
    /// samples; with a standard deviation asked for, they are decoded.
    @Test(arguments: [("UTC", "hour"), ("Asia/Kathmandu", "15m"), ("Australia/Lord_Howe", "hour"), ("UTC", "47m")])
    func aggregatesEqualABruteForceOracle(zone: String, bucket: String) throws {
        let samples = SideTotalsTests.wholeNumbers(40_000, seed: 12, maxStep: 240)
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        let lo = samples[100].start.microseconds
        let hi = samples[39_900].start.microseconds
        let result = try SideTotalsTests.aggregate(store, zone, bucket, lo, hi)
        #expect(result.blocksAddedUp > 0 && result.blocksFromSlots == 0)
        try SideTotalsTests.expectBruteForce(result, samples, zone, bucket, lo, hi)
        var options = AggregateOptions()
        options.zone = try TimeZoneRules.named(zone)
        options.bucket = try BucketSpec.parse(bucket)
        options.statistics = [.count, .stddev]
        let spread = try store.aggregate(SlotSummaryTests.type, from: lo, to: hi, options: options)
        #expect(spread.blocksAddedUp == 0 && spread.blocksDecoded > 0)
        #expect(spread.rows.map { $0.values[.count] } == result.rows.map { $0.values[.count] })
    }
}
