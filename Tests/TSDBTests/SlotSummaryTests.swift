import Foundation
import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// The slot region (Formats/segment-v3.md §6.1): summaries per 15 minutes of UTC time, checked
/// against brute force, its failure modes, and aggregates answered from it against an oracle.
@Suite struct SlotSummaryTests {
    static let type = "HKQuantityTypeIdentifierHeartRate"
    static let march2025: Int64 = 1_740_787_200_000_000

    /// A heart-rate-like series from `start`: steps of 1 s to `maxStep` seconds (by default ~60
    /// samples a quarter hour, dense enough for slot summaries) with a gap of up to two hours now
    /// and then, values with 0–3 fraction digits in `mantissas`, every 11th sample without a value.
    static func series(
        _ n: Int, seed: UInt64, start: Int64 = march2025, mantissas: ClosedRange<Int64> = 300...2000,
        maxStep: Int64 = 30
    ) -> [Sample] {
        var rng = SplitMix64(seed: seed)
        var t = start
        return (0..<n).map { i in
            t +=
                Int64.random(in: 0...49, using: &rng) == 0
                ? Int64.random(in: 1...7200, using: &rng) * 1_000_000
                : Int64.random(in: 1...maxStep, using: &rng) * 1_000_000
            let value: SampleValue =
                i % 11 == 5
                ? .null
                : .decimal(
                    ExactDecimal(
                        mantissa: Int64.random(in: mantissas, using: &rng), scale: UInt8.random(in: 0...3, using: &rng))
                )
            let stamp = Timestamp(microseconds: t, form: TimeForm(offsetMinutes: 60, fractionDigits: 0, isZulu: false))
            return Sample(
                type: type, start: stamp, end: stamp, value: value, unit: .text("count/min"), source: .text("watch"),
                device: .absent, metadata: .absent)
        }
    }

    func withReader<R>(
        _ samples: [Sample], blockSamples: Int, codec: BlockCodec = .zstd, _ body: (SegmentReader) throws -> R
    )
        throws -> R
    {
        let folder = TemporaryFolder("slots")
        defer { folder.cleanup() }
        folder.write(bytes: encodeSegment(samples, blockSamples: blockSamples, codec: codec), to: "x.seg")
        return try body(try SegmentReader(path: folder.path + "/x.seg"))
    }

    /// Each block's samples grouped by slot, with plain sums: what the slot region must say.
    func bruteForce(_ reader: SegmentReader) throws -> [[SlotSummary]] {
        let block = DecodedBlock()
        return try (0..<reader.blockCount).map { b in
            try reader.decode(block: b, into: block)
            var slots: [SlotSummary] = []
            var values: [[Double]] = []
            for i in 0..<block.count {
                let start = ISO8601.floorDivide(block.starts[i], 900_000_000).0 * 900_000_000
                if slots.last?.start != start {
                    slots.append(
                        SlotSummary(
                            start: start, sampleCount: 0, valueCount: 0, minValue: .infinity, maxValue: -.infinity,
                            sum: 0, sumOfSquaredDeviations: 0))
                    values.append([])
                }
                slots[slots.count - 1].sampleCount += 1
                if let v = block.value(at: i, in: reader) { values[values.count - 1].append(v) }
            }
            for k in slots.indices where !values[k].isEmpty {
                let v = values[k]
                let mean = v.reduce(0, +) / Double(v.count)
                slots[k].valueCount = v.count
                slots[k].minValue = v.min()!
                slots[k].maxValue = v.max()!
                slots[k].sum = v.reduce(0, +)
                slots[k].sumOfSquaredDeviations = v.map { ($0 - mean) * ($0 - mean) }.reduce(0, +)
            }
            return slots
        }
    }

    func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-9 * max(1, abs(a), abs(b)) }

    @Test(arguments: [(1, 64, BlockCodec.zstd), (2, 128, .lz4), (3, 4096, .none), (4, 7, .zstd)])
    func slotsEqualABruteForceGroupingOfEachBlock(seed: UInt64, blockSamples: Int, codec: BlockCodec) throws {
        let samples = Self.series(3000, seed: seed)
        try withReader(samples, blockSamples: blockSamples, codec: codec) { reader in
            let table = try reader.slotTable()
            let expected = try bruteForce(reader)
            #expect(table.ranges.count == reader.blockCount)
            for (b, slots) in expected.enumerated() {
                let stored = Array(table.slots[table.ranges[b]])
                let sparse = slots.count * SlotRegion.minimumSamplesPerSlot > reader.summaries[b].sampleCount
                try #require(stored.count == (sparse ? 0 : slots.count), "block \(b)")
                for (s, e) in zip(stored, slots) {
                    #expect(s.start == e.start && s.sampleCount == e.sampleCount && s.valueCount == e.valueCount)
                    #expect(s.minValue == e.minValue && s.maxValue == e.maxValue, "block \(b) slot \(s.start)")
                    #expect(close(s.sum, e.sum) && abs(s.sumOfSquaredDeviations - e.sumOfSquaredDeviations) <= 1e-6)
                }
            }
        }
    }

    @Test func sparseBlocksGetNoSlots() throws {
        // A sample every 5–20 minutes: one or two per slot, below the 12 a block must average.
        let sparse = Self.series(300, seed: 13, maxStep: 1200).map {
            var s = $0
            let t = $0.start.microseconds / 300_000_000 * 300_000_000
            (s.start.microseconds, s.end.microseconds) = (t, t)
            return s
        }
        let ranges = try withReader(sparse, blockSamples: 100) { try $0.slotTable().ranges }
        #expect(ranges.allSatisfy { $0.isEmpty })
        // About ten a quarter hour (a watch at rest): slots would cost over half the samples' bytes.
        let resting = Self.series(600, seed: 14, maxStep: 180)
        #expect(try withReader(resting, blockSamples: 300) { try $0.slotTable().ranges }.allSatisfy { $0.isEmpty })
        // Sixty a quarter hour (a heavy wearer): every block has them.
        let dense = Self.series(600, seed: 14)
        #expect(try withReader(dense, blockSamples: 300) { try $0.slotTable().ranges }.allSatisfy { !$0.isEmpty })
    }

    /// §6.1 A writer keeps a slot region compressed only when that saves a quarter of it.
    @Test(arguments: [BlockCodec.lz4, .zstd])
    func aSlotRegionIsCompressedOnlyWhenThatSavesAQuarter(codec: BlockCodec) throws {
        // Heart rate's slots vary from quarter hour to quarter hour: compression saves little.
        let varied = SideTotalsTests.wholeNumbers(20_000, seed: 31, maxStep: 20)
        let (stored, raw, used, slots) = try withReader(varied, blockSamples: 4096, codec: codec) {
            ($0.slotRegion.storedLength, $0.slotRegion.rawLength, $0.slotRegion.codec, try $0.slotTable().slots.count)
        }
        #expect(raw > 1_500 && used == .none && stored == raw)
        #expect(slots > 150)
        // A sample every 10 s of the same value: every slot alike, stored compressed.
        let even = (0..<20_000).map { i in
            var s = varied[0]
            s.start.microseconds = SlotSummaryTests.march2025 + Int64(i) * 10_000_000
            s.end = s.start
            return s
        }
        let (evenStored, evenRaw, evenUsed, evenSlots) = try withReader(even, blockSamples: 4096, codec: codec) {
            ($0.slotRegion.storedLength, $0.slotRegion.rawLength, $0.slotRegion.codec, try $0.slotTable().slots.count)
        }
        #expect(evenUsed == codec && evenStored * 4 <= evenRaw * 3)
        #expect(evenSlots > 150)
    }

    @Test func aNumberKeptAsTextLeavesOnlyItsBlockWithoutSlots() throws {
        var samples = Self.series(200, seed: 7)
        samples[150].value = .numberText("7.2e1")
        try withReader(samples, blockSamples: 100) { reader in
            let table = try reader.slotTable()
            #expect(!table.ranges[0].isEmpty)
            #expect(table.ranges[1].isEmpty)
        }
    }

    @Test func mantissasBeyondTwoToThe53LeaveTheBlockWithoutSlots() throws {
        let big = Self.series(200, seed: 8, mantissas: (1 << 53)...(1 << 53) + 9)
        let small = Self.series(200, seed: 8)
        let bigRanges = try withReader(big, blockSamples: 256) { try $0.slotTable().ranges }
        let smallRanges = try withReader(small, blockSamples: 256) { try $0.slotTable().ranges }
        #expect(bigRanges == [0..<0])
        #expect(!smallRanges[0].isEmpty)
    }

    /// The slot region's CRC is checked when the region is read (the file opens without it:
    /// queries that read no slots do not pay for it), by aggregates and by `tsdb verify` alike.
    @Test func aFlippedSlotRegionByteIsCaughtWhenTheRegionIsRead() throws {
        var bytes = encodeSegment(Self.series(300, seed: 9), blockSamples: 64, codec: .none)
        let footer = bytes.count - SegmentFormat.footerSize
        let blocks = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: footer + 32, as: UInt32.self) })
        let slotEnd = footer - blocks * SegmentFormat.indexEntrySize
        bytes[slotEnd - 2] ^= 0x04
        let folder = TemporaryFolder("slots")
        defer { folder.cleanup() }
        folder.write(bytes: bytes, to: "x.seg")
        let damaged = Locked(0)
        let reader = try SegmentReader(
            path: folder.path + "/x.seg", offset: 0, count: bytes.count, onDamage: { damaged.withLock { $0 += 1 } })
        func isCRCMismatch(_ e: any Error) -> Bool {
            let e = e as? TSDBError
            return e?.kind == .corruption && e?.path?.hasSuffix("x.seg") == true
                && e?.message.contains("slot region CRC mismatch") == true
        }
        #expect(throws: Never.self) { try reader.decode(block: 0, into: DecodedBlock()) }
        #expect(performing: { try reader.slotStream() }, throws: isCRCMismatch)
        #expect(performing: { try reader.slotTable() }, throws: isCRCMismatch)
        #expect(damaged.withLock { $0 } == 2)
    }

    /// A region whose CRC is right but whose counts disagree with the block index (a writer bug,
    /// or damage written with a fresh CRC) is corruption, not a wrong answer.
    @Test func slotsThatDisagreeWithTheBlockIndexAreCorruption() throws {
        let twentySeconds = Self.series(20, seed: 10).enumerated().map { i, sample in
            var s = sample
            (s.start.microseconds, s.end.microseconds) = (Self.march2025 + Int64(i) * 1_000_000, 0)
            s.end.microseconds = s.start.microseconds
            return s
        }
        var bytes = encodeSegment(twentySeconds, blockSamples: 64, codec: .none)
        let footer = bytes.count - SegmentFormat.footerSize
        let slotEnd = footer - SegmentFormat.indexEntrySize
        let slotLength = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: footer + 48, as: UInt32.self) })
        let region = slotEnd - slotLength
        // Count, scale, gap, then the first slot's sample count: one more sample than the block has.
        bytes[region + 3] += 1
        func patch(_ value: UInt32, at offset: Int) {
            for k in 0..<4 { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k))) }
        }
        patch(CRC32C.checksum(Array(bytes[region..<slotEnd])), at: footer + 56)
        patch(CRC32C.checksum(Array(bytes[footer..<footer + 68])), at: footer + 68)
        let folder = TemporaryFolder("slots")
        defer { folder.cleanup() }
        folder.write(bytes: bytes, to: "x.seg")
        let reader = try SegmentReader(path: folder.path + "/x.seg")
        #expect {
            try reader.slotTable()
        } throws: { e in
            let e = e as? TSDBError
            return e?.kind == .corruption && e?.path?.hasSuffix("x.seg") == true
                && e?.message.contains("more than the block") == true
        }
    }

    // MARK: - Aggregates from slots against an oracle

    /// The brute-force oracle's grouping: per bucket start, the samples starting in `[lo, hi)`
    /// and their numeric values in time order.
    static func byBucket(_ samples: [Sample], _ walker: BucketWalker, lo: Int64, hi: Int64)
        -> (counts: [Int64: Int], values: [Int64: [Double]])
    {
        var counts: [Int64: Int] = [:]
        var values: [Int64: [Double]] = [:]
        for s in samples where s.start.microseconds >= lo && s.start.microseconds < hi {
            let b = walker.bucket(containing: s.start.microseconds).start
            counts[b, default: 0] += 1
            if let v = s.value.doubleValue { values[b, default: []].append(v) }
        }
        return (counts, values)
    }

    /// Day files of `samples` (by UTC date), compacted into a store.
    func store(_ samples: [Sample]) throws -> (Store, TemporaryFolder) {
        let folder = TemporaryFolder("slot-store")
        var byDay: [String: [Sample]] = [:]
        for s in samples {
            byDay[String(ISO8601.format(s.start.microseconds, .zulu).prefix(10)), default: []].append(s)
        }
        for (date, day) in byDay {
            folder.write(
                bytes: DayFileWriter.dayFile(date: date, samples: day),
                to: "raw/\(date.prefix(4))/\(date.dropFirst(5).prefix(2))/\(date).json")
        }
        _ = try Compactor(layout: StoreLayout(appleHealthDirectory: folder.path)).run()
        return (try Store(at: folder.path), folder)
    }

    @Test(arguments: [
        ("UTC", "15m"), ("UTC", "hour"), ("Asia/Kathmandu", "day"), ("Australia/Lord_Howe", "day"),
        ("Australia/Lord_Howe", "hour"), ("America/St_Johns", "week"), ("Europe/Paris", "6h"),
    ])
    func aggregatesAnsweredFromSlotsEqualABruteForceOracle(zone: String, bucket: String) throws {
        try checkSlotAnswersAgainstTheOracle(zone: zone, bucket: bucket, spread: true)
    }

    /// Without a standard deviation, slots are added up per bucket as they are read (SlotRunReader).
    @Test(arguments: [
        ("UTC", "hour"), ("Asia/Kathmandu", "day"), ("Australia/Lord_Howe", "day"), ("Australia/Lord_Howe", "hour"),
        ("America/St_Johns", "week"), ("Europe/Paris", "6h"), ("UTC", "30m"),
    ])
    func aggregatesFromSlotRunsEqualABruteForceOracle(zone: String, bucket: String) throws {
        try checkSlotAnswersAgainstTheOracle(zone: zone, bucket: bucket, spread: false)
    }

    func checkSlotAnswersAgainstTheOracle(zone: String, bucket: String, spread: Bool) throws {
        // Six weeks across Lord Howe's DST change (6 April 2025).
        let samples = Self.series(40_000, seed: 11, start: 1_742_860_800_000_000)
        let (store, folder) = try store(samples)
        defer { folder.cleanup() }
        var options = AggregateOptions()
        options.zone = try TimeZoneRules.named(zone)
        options.bucket = try BucketSpec.parse(bucket)
        options.statistics = spread ? [.count, .min, .max, .mean, .stddev, .sum] : [.count, .min, .max, .mean, .sum]
        let lo = samples[100].start.microseconds / 3_600_000_000 * 3_600_000_000
        let hi = samples[39_900].start.microseconds / 3_600_000_000 * 3_600_000_000
        let result = try store.aggregate(Self.type, from: lo, to: hi, options: options)
        #expect(result.blocksFromSlots > 0)

        let walker = BucketWalker(spec: options.bucket, zone: options.zone, weekStart: 1, from: lo, to: hi)
        let (counts, oracle) = Self.byBucket(samples, walker, lo: lo, hi: hi)
        #expect(result.rows.map(\.start) == counts.keys.sorted())
        for row in result.rows {
            let v = oracle[row.start] ?? []
            let mean = v.reduce(0, +) / Double(v.count)
            let variance = v.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(v.count - 1)
            #expect(row.values[.count] == Double(counts[row.start]!))
            #expect(row.values[.min] == v.min() && row.values[.max] == v.max())
            guard v.count > 1 else {
                #expect(
                    row.values[.stddev] == nil && (v.isEmpty ? row.values[.mean] == nil : row.values[.mean] == v[0]))
                continue
            }
            #expect(close(row.values[.mean]!, mean) && close(row.values[.sum]!, v.reduce(0, +)))
            guard spread else { continue }
            #expect(abs(row.values[.stddev]! - variance.squareRoot()) <= 1e-9 * max(1, variance.squareRoot()))
        }
    }

    @Test func aRangeOffTheQuarterHourGridDecodesInstead() throws {
        let samples = Self.series(3000, seed: 12)
        let (store, folder) = try store(samples)
        defer { folder.cleanup() }
        var options = AggregateOptions()
        options.bucket = .calendar(.hour)
        let lo = samples[0].start.microseconds / 3_600_000_000 * 3_600_000_000 + 7 * 60_000_000
        let hi = samples[2999].start.microseconds
        let offGrid = try store.aggregate(Self.type, from: lo, to: hi, options: options)
        let counted = samples.filter { $0.start.microseconds >= lo && $0.start.microseconds < hi }.count
        #expect(offGrid.rows.reduce(0) { $0 + Int($1.values[.count]!) } == counted)
        #expect(offGrid.blocksDecoded > 0)
    }
}
