import Testing

@testable import TSDB
@testable import TSDBSynthetic

/// A block's totals either side of one bucket edge, read from its packed start and value columns
/// (PackedColumn, SegmentReader.sideTotals) against brute force over the decoded values.
@Suite struct SideTotalsTests {
    /// `values` encoded as a column (§5.1), in a buffer with the slack readers may load.
    static func column(_ values: [Int64]) -> [UInt8] {
        var w = ByteWriter()
        values.withUnsafeBufferPointer { IntColumn.encode($0, into: &w) }
        return w.bytes + [UInt8](repeating: 0, count: IntColumn.readSlack)
    }

    static func located(_ bytes: [UInt8], count: Int, _ body: (PackedColumn) throws -> Void) throws {
        try bytes.withUnsafeBytes { buffer in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: buffer.dropLast(IntColumn.readSlack)), context: "t")
            var column = PackedColumn()
            try column.locate(&r, count: count)
            #expect(r.isAtEnd)
            try body(column)
        }
    }

    static func totals(_ values: ArraySlice<Int64>) -> ValueTotals {
        var t = ValueTotals()
        for v in values { t.add(v) }
        return t
    }

    /// Columns shaped to take each encoding: equal values (FOR of width 0), a random walk of small
    /// steps (delta-FOR), steps whose spread changes along the column (miniblocks), wide values (FOR).
    static func shapes(_ n: Int, _ rng: inout SplitMix64) -> [[Int64]] {
        var walk: Int64 = 70
        var offset: Int64 = 0
        let spread = Int64.random(in: 1...40, using: &rng)
        return [
            [Int64](repeating: Int64.random(in: -5...5, using: &rng), count: n),
            (0..<n).map { _ in
                walk += Int64.random(in: -3...3, using: &rng)
                return walk
            },
            (0..<n).map { i in
                offset += i % 300 < 150 ? Int64.random(in: 1...5, using: &rng) : Int64.random(in: 60...300, using: &rng)
                return offset
            },
            (0..<n).map { _ in Int64.random(in: -spread * 1000...spread * 1000, using: &rng) },
        ]
    }

    @Test(arguments: [2, 3, 9, 129, 300, 1000, 4096])
    func countsBelowEqualBruteForceFromEitherEnd(n: Int) throws {
        var rng = SplitMix64(seed: UInt64(n))
        for values in Self.shapes(n, &rng) {
            let ascending = values.sorted()
            try Self.located(Self.column(ascending), count: n) { column in
                // Every value (every 13th of a block's worth), either side of each, and beyond both ends.
                let stride = n > 1000 ? 13 : 1
                let limits = ascending.enumerated().filter { $0.offset % stride == 0 }.flatMap { _, v in
                    [v - 1, v, v + 1]
                }
                for limit in limits + [.min, .max] {
                    let expected = ascending.filter { $0 < limit }.count
                    for fromEnd in [false, true] {
                        #expect(column.count(below: limit, last: ascending[n - 1], fromEnd: fromEnd) == expected)
                    }
                }
            }
        }
    }

    /// Deltas followed over a run (a sum of packed numbers, eight at a time for widths to 8) equal
    /// their one-by-one sum, for every width to 16 and every range of a run of 128.
    @Test func followedDeltasEqualTheirSumAtEveryWidth() {
        var rng = SplitMix64(seed: 17)
        for width in 0...16 {
            let numbers = (0..<128).map { _ in width == 0 ? 0 : rng.next() & ((1 << UInt64(width)) - 1) }
            // The bit stream of §5.1, and the slack a reader may load past it.
            var bytes = [UInt8](repeating: 0, count: (128 * width + 7) / 8 + IntColumn.readSlack)
            for (i, n) in numbers.enumerated() {
                for b in 0..<width where n >> UInt64(b) & 1 == 1 {
                    bytes[(i * width + b) / 8] |= 1 << ((i * width + b) % 8)
                }
            }
            let reference = Int64.random(in: -1000...1000, using: &rng)
            bytes.withUnsafeBytes { buffer in
                let run = PackedRun(reference: reference, width: width, bytes: buffer.baseAddress!, count: 128)
                for low in 0...40 {
                    for high in [low, low + 1, low + 7, low + 8, low + 9, low + 23, low + 64, 128] where high <= 128 {
                        let expected = numbers[low..<high].reduce(Int64(5)) { $0 &+ reference &+ Int64($1) }
                        #expect(run.followed(low..<high, from: 5) == expected, "width \(width), \(low)..<\(high)")
                    }
                }
            }
        }
    }

    @Test(arguments: [2, 3, 9, 129, 300, 1000])
    func totalsEitherSideEqualBruteForce(n: Int) throws {
        var rng = SplitMix64(seed: UInt64(n) &* 7)
        for values in Self.shapes(n, &rng) {
            try Self.located(Self.column(values), count: n) { column in
                let whole = Self.totals(values[...])
                for split in 0...n {
                    let expected = (Self.totals(values[..<split]), Self.totals(values[split...]))
                    // Without the whole's totals both sides are added up; with them, the fewer alone
                    // when they hold neither extreme.
                    for known in [nil, whole] {
                        let sides = column.totals(split: split, whole: known)
                        #expect(sides?.before == expected.0 && sides?.after == expected.1, "split \(split)")
                    }
                }
            }
        }
    }

    @Test func aWholeThatCannotBeIsNotUsed() throws {
        let values: [Int64] = (0..<200).map { 60 + $0 % 37 }
        try Self.located(Self.column(values), count: 200) { column in
            var whole = Self.totals(values[...])
            whole.sum = whole.maximum * 200 + 1  // more than 200 values of at most the maximum make
            let sides = column.totals(split: 10, whole: whole)
            #expect(sides?.before == Self.totals(values[..<10]) && sides?.after == Self.totals(values[10...]))
        }
    }

    @Test func anExtremeTheFewerHoldIsSoughtInTheRest() throws {
        // The fewer side holds the lowest value, the highest or both (first or last in the column),
        // so the rest's are found from its values; the other extreme is the whole's.
        let middle = (1..<199).map { Int64(60 + $0 % 37) }
        let ends: [(Int64, Int64)] = [(40, 70), (130, 70), (40, 130)]
        for (low, high) in ends {
            for (values, split) in [([low, high] + middle, 10), (middle + [high, low], 190)] {
                try Self.located(Self.column(values), count: 200) { column in
                    let sides = column.totals(split: split, whole: Self.totals(values[...]))
                    #expect(
                        sides?.before == Self.totals(values[..<split])
                            && sides?.after == Self.totals(values[split...]), "\(low) \(high) split \(split)")
                }
            }
        }
    }

    @Test func theRestsSearchEndsAtAValueEqualToTheWholesExtreme() throws {
        // The whole's lowest value, 40, is in the fewer side and again early in the rest: nothing
        // lies below it, so the search stops there. An entry claiming 40 over a block that holds 35
        // shows where it stopped (the entry is trusted, as for a rest that holds both extremes).
        // Steps of one, so the column is delta-coded (§5.1).
        let wave = (0..<40).map { Int64($0 % 2) }
        let down = (40...60).reversed().map { Int64($0) } + wave.map { 40 + $0 } + (35...39).reversed().map(Int64.init)
        let values = (40...60).map(Int64.init) + wave.map { 60 + $0 } + down + (36...70).map(Int64.init)
        try Self.located(Self.column(values), count: values.count) { column in
            var whole = Self.totals(values[...])
            whole.minimum = 40
            let after = column.totals(split: 10, whole: whole)?.after
            #expect(after?.minimum == 40 && after?.maximum == 70 && after?.count == values.count - 10)
        }
    }

    @Test func valuesOfTwoBillionOrMoreAreLeftToTheDecoder() throws {
        let values: [Int64] = [1, 5, PackedColumn.valueBound, 3]
        try Self.located(Self.column(values), count: 4) { column in
            #expect(column.totals(split: 2, whole: nil) == nil)
        }
    }

    // MARK: - Blocks of a segment

    /// Heart rate in whole numbers every 1–`maxStep` seconds from `start`.
    static func wholeNumbers(_ n: Int, seed: UInt64, maxStep: Int64) -> [Sample] {
        var rng = SplitMix64(seed: seed)
        var t = SlotSummaryTests.march2025
        var value: Int64 = 70
        return (0..<n).map { _ in
            t += Int64.random(in: 1...maxStep, using: &rng) * 1_000_000
            value = min(max(value + Int64.random(in: -4...4, using: &rng), 40), 190)
            let stamp = Timestamp(microseconds: t, form: TimeForm(offsetMinutes: 60, fractionDigits: 0, isZulu: false))
            return Sample(
                type: SlotSummaryTests.type, start: stamp, end: stamp,
                value: .decimal(ExactDecimal(mantissa: value, scale: 0)),
                unit: .text("count/min"), source: .text("watch"), device: .absent, metadata: .absent)
        }
    }

    func segment(_ samples: [Sample], blockSamples: Int, codec: BlockCodec) throws -> (SegmentReader, TemporaryFolder) {
        let folder = TemporaryFolder("side-totals")
        folder.write(bytes: encodeSegment(samples, blockSamples: blockSamples, codec: codec), to: "x.seg")
        return (try SegmentReader(path: folder.path + "/x.seg"), folder)
    }

    @Test(arguments: [(BlockCodec.none, 300, Int64(5)), (.lz4, 1000, 90), (.zstd, 4096, 20)])
    func sideTotalsOfEveryEdgeEqualTheDecodedBlock(codec: BlockCodec, blockSamples: Int, maxStep: Int64) throws {
        let (reader, folder) = try segment(
            Self.wholeNumbers(6000, seed: UInt64(blockSamples), maxStep: maxStep), blockSamples: blockSamples,
            codec: codec)
        defer { folder.cleanup() }
        let block = DecodedBlock()
        let scratch = DecodedBlock()
        var rng = SplitMix64(seed: 3)
        for b in 0..<reader.blockCount {
            try reader.decode(block: b, into: block)
            let starts = Array(block.starts)
            let values = Array(block.mantissas)
            // Edges at, just after and between samples, through the whole block.
            var edges = (1..<starts.count).flatMap { [starts[$0], starts[$0 - 1] + 1] }
            edges.shuffle(using: &rng)
            for edge in edges.prefix(200) + [starts.last!] {
                let split = starts.firstIndex { $0 >= edge }!
                let sides = try reader.sideTotals(block: b, edge: edge, scratch: scratch)
                #expect(sides?.before == Self.totals(values[..<split]), "block \(b), edge \(edge)")
                #expect(sides?.after == Self.totals(values[split...]), "block \(b), edge \(edge)")
            }
            // An edge at or before the first start, or past the last, is not inside the block.
            for edge in [starts[0], starts[0] - 1, starts.last! + 1] {
                #expect(try reader.sideTotals(block: b, edge: edge, scratch: scratch) == nil)
            }
        }
    }

    @Test func blocksWithFractionsOrValuelessSamplesAreLeftToTheDecoder() throws {
        // SlotSummaryTests' series: values with 0–3 fraction digits, every 11th without a value.
        let samples = SlotSummaryTests.series(3000, seed: 5)
        let (reader, folder) = try segment(samples, blockSamples: 500, codec: .lz4)
        defer { folder.cleanup() }
        let scratch = DecodedBlock()
        for b in 0..<reader.blockCount {
            let s = reader.summaries[b]
            #expect(
                try reader.sideTotals(block: b, edge: (s.firstStart + s.lastStart) / 2 + 1, scratch: scratch) == nil)
        }
    }

    @Test func aDamagedBlockIsAnErrorNamingTheFile() throws {
        var bytes = encodeSegment(Self.wholeNumbers(2000, seed: 9, maxStep: 10), blockSamples: 500, codec: .none)
        bytes[SegmentFormat.headerSize + 40] ^= 0x10
        let folder = TemporaryFolder("side-totals-damage")
        defer { folder.cleanup() }
        folder.write(bytes: bytes, to: "x.seg")
        let reader = try SegmentReader(path: folder.path + "/x.seg")
        let s = reader.summaries[0]
        #expect {
            _ = try reader.sideTotals(block: 0, edge: (s.firstStart + s.lastStart) / 2, scratch: DecodedBlock())
        } throws: { error in
            let e = error as? TSDBError
            return e?.kind == .corruption && e!.description.contains("x.seg") && e!.description.contains("CRC")
        }
    }

    // MARK: - Aggregates

    /// Day and week buckets in zones whose days cut the writer's blocks (which end at the samples'
    /// own +01:00 midnight): blocks across one edge are added up either side of it, and every row
    /// equals brute force over the samples; and hours, where blocks lie across many edges.
    @Test(arguments: [
        ("UTC", "day", Int64(240)), ("Asia/Kathmandu", "day", 240), ("Australia/Lord_Howe", "day", 240),
        ("America/St_Johns", "week", 240), ("UTC", "day", 60), ("Europe/Paris", "hour", 60),
    ])
    func aggregatesEqualABruteForceOracle(zone: String, bucket: String, maxStep: Int64) throws {
        let samples = Self.wholeNumbers(40_000, seed: UInt64(maxStep), maxStep: maxStep)
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        let lo = samples[100].start.microseconds
        let hi = samples[39_900].start.microseconds
        let result = try Self.aggregate(store, zone, bucket, lo, hi)
        // Days and weeks cut blocks once. Those of every 2 minutes on average have no slot
        // summaries and are added up either side; those of every 30 s have, and a UTC midnight,
        // an hour into a block, leaves few slots before it: they are read (SlotSides). Hours cut
        // blocks many times (those come from slots).
        if maxStep == 240 { #expect(result.blocksSplit > 0 && result.blocksFromSlots == 0) }
        if maxStep == 60 && bucket == "day" { #expect(result.blocksFromSlots > 0) }
        try Self.expectBruteForce(result, samples, zone, bucket, lo, hi)
    }

    static func aggregate(_ store: Store, _ zone: String, _ bucket: String, _ lo: Int64, _ hi: Int64) throws
        -> AggregateResult
    {
        var options = AggregateOptions()
        options.zone = try TimeZoneRules.named(zone)
        options.bucket = try BucketSpec.parse(bucket)
        options.statistics = [.count, .min, .max, .mean, .sum]
        return try store.aggregate(SlotSummaryTests.type, from: lo, to: hi, options: options)
    }

    static func expectBruteForce(
        _ result: AggregateResult, _ samples: [Sample], _ zone: String, _ bucket: String,
        _ lo: Int64, _ hi: Int64
    ) throws {
        let walker = BucketWalker(
            spec: try BucketSpec.parse(bucket), zone: try TimeZoneRules.named(zone), weekStart: 1, from: lo, to: hi)
        let (counts, oracle) = SlotSummaryTests.byBucket(samples, walker, lo: lo, hi: hi)
        #expect(result.rows.map(\.start) == counts.keys.sorted())
        for row in result.rows {
            let v = oracle[row.start] ?? []
            #expect(row.values[.count] == Double(counts[row.start]!))
            #expect(row.values[.min] == v.min() && row.values[.max] == v.max())
            #expect(row.values[.sum] == v.reduce(0, +) && row.values[.mean] == v.reduce(0, +) / Double(v.count))
        }
    }

    // MARK: - Whether a segment's slot region is opened

    /// Heart rate in whole numbers for `days` days from March 2025: every `quiet` seconds (60: 15
    /// samples a quarter hour), 70 (every slot summary alike) or with `jumpy` anywhere from 40 to
    /// 190, but every 1–5 s on day `dense`, in small steps.
    static func mostlyQuiet(days: Int, dense: Int, jumpy: Bool = false, quiet: Int64 = 60, seed: UInt64)
        -> [Sample]
    {
        var rng = SplitMix64(seed: seed)
        let (start, day) = (SlotSummaryTests.march2025, Int64(86_400_000_000))
        var (t, value, samples) = (start, Int64(70), [Sample]())
        while t < start + Int64(days) * day {
            let busy = (t - start) / day == Int64(dense)
            t += (busy ? Int64.random(in: 1...5, using: &rng) : quiet) * 1_000_000
            if busy {
                value = min(max(value + Int64.random(in: -4...4, using: &rng), 40), 190)
            } else {
                value = jumpy ? Int64.random(in: 40...190, using: &rng) : 70
            }
            let stamp = Timestamp(microseconds: t, form: TimeForm(offsetMinutes: 60, fractionDigits: 0, isZulu: false))
            samples.append(
                Sample(
                    type: SlotSummaryTests.type, start: stamp, end: stamp,
                    value: .decimal(ExactDecimal(mantissa: value, scale: 0)), unit: .text("count/min"),
                    source: .text("watch"), device: .absent, metadata: .absent))
        }
        return samples
    }

    /// UTC days cut each of the writer's blocks (which end at +01:00 midnight) an hour after its
    /// start. The quiet days' slot summaries are alike, so the writer compresses the segment's slot
    /// region (segment-v3 §6.1), and opening it costs its decompression. Each block's four slots
    /// before the edge cost less than adding it up either side: over the 25 days that pays for the
    /// opening, and every cut block is read from its slots; over two blocks it does not, and the
    /// region stays closed. Hours cut every block many times: the region is opened.
    /// All equal brute force.
    @Test func aSlotRegionIsOpenedOnlyWhenItsBlocksPayForIt() throws {
        let samples = Self.mostlyQuiet(days: 25, dense: 12, seed: 41)
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        let segments = try store.segments(of: SlotSummaryTests.type)
        #expect(!segments.isEmpty && segments.allSatisfy { $0.slotRegion.codec != .none })
        let (first, last) = (samples[0].start.microseconds, samples[samples.count - 1].start.microseconds + 1)
        let days = try Self.aggregate(store, "UTC", "day", first, last)
        #expect(days.blocksFromSlots >= 24 && days.blocksDecoded == 0 && days.blocksSplit == 0)
        try Self.expectBruteForce(days, samples, "UTC", "day", first, last)
        // Two whole blocks (+01:00 days: from 23:00 UTC), each cut by one UTC midnight.
        let (dayUTC, hour): (Int64, Int64) = (86_400_000_000, 3_600_000_000)
        let (twoFrom, twoTo) = ((first / dayUTC + 5) * dayUTC - hour, (first / dayUTC + 7) * dayUTC - hour)
        let twoDays = try Self.aggregate(store, "UTC", "day", twoFrom, twoTo)
        #expect(twoDays.blocksFromSlots == 0 && twoDays.blocksDecoded == 0 && twoDays.blocksSplit == 2)
        try Self.expectBruteForce(twoDays, samples, "UTC", "day", twoFrom, twoTo)
        let hours = try Self.aggregate(store, "UTC", "hour", first, last)
        #expect(hours.blocksFromSlots >= 24)
        try Self.expectBruteForce(hours, samples, "UTC", "hour", first, last)
    }

    /// The same days with the quiet values jumping about: their slot summaries differ, the writer
    /// stores the region uncompressed, and opening it costs little more than a copy (segment-v3
    /// §6.1). Every block is read from its slots before the edge.
    @Test func anUncompressedSlotRegionIsOpenedForTheBlocksItServes() throws {
        let samples = Self.mostlyQuiet(days: 10, dense: 2, jumpy: true, seed: 41)
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        let segments = try store.segments(of: SlotSummaryTests.type)
        #expect(!segments.isEmpty && segments.allSatisfy { $0.slotRegion.codec == .none })
        let (first, last) = (samples[0].start.microseconds, samples[samples.count - 1].start.microseconds + 1)
        let days = try Self.aggregate(store, "UTC", "day", first, last)
        #expect(days.blocksFromSlots >= 9 && days.blocksDecoded == 0 && days.blocksSplit == 0)
        try Self.expectBruteForce(days, samples, "UTC", "day", first, last)
    }

    /// Quiet days of a sample every two minutes, too few a quarter hour for slots (§6.1), and one
    /// dense day that has them: its block saves more than opening the region and stepping to it
    /// costs, so the region is opened for that block alone; the others are added up either side.
    @Test func aSlotRegionIsOpenedForOneBlockThatPaysForIt() throws {
        let samples = Self.mostlyQuiet(days: 10, dense: 4, jumpy: true, quiet: 120, seed: 42)
        let (store, folder) = try SlotSummaryTests().store(samples)
        defer { folder.cleanup() }
        let (first, last) = (samples[0].start.microseconds, samples[samples.count - 1].start.microseconds + 1)
        let days = try Self.aggregate(store, "UTC", "day", first, last)
        #expect(days.blocksFromSlots >= 1 && days.blocksFromSlots <= 2 && days.blocksDecoded == 0)
        #expect(days.blocksSplit >= 8)
        try Self.expectBruteForce(days, samples, "UTC", "day", first, last)
    }
}
