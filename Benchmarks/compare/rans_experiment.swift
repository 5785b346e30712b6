// What an entropy coder would cost a reader: heart rate's three costly block columns (start gaps,
// mantissa deltas, motion context) coded with static rANS tables per segment and context (the
// model of coder_model.py, made real), against the same columns bit-packed as segment-v3 packs
// them (deltas in runs of 128, a reference and width a run), decoded by the same harness into
// starts, mantissas and motion values. Prints bytes a sample and decode speed for both, and the
// cost of building a segment's decoding tables (a reader builds them before its first block).
//
//     python3 Benchmarks/compare/dump_columns.py STORE COLUMNS_FILE
//     swiftc -O -o /tmp/rans_experiment Benchmarks/compare/rans_experiment.swift  [-D TEN_BIT_TABLES]
//     /tmp/rans_experiment COLUMNS_FILE [ROUNDS]
//
// Not part of the package: an experiment behind NOTES.md's "≤ 1.3 B per heart-rate sample".

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Input

struct Block {
    var gaps: [UInt32]
    var deltas: [UInt32]  // zigzag
    var motion: [UInt32]
    var count: Int { motion.count }
}

func readColumns(_ path: String) -> [[Block]] {
    guard let f = fopen(path, "rb") else { fatalError("cannot open \(path)") }
    defer { fclose(f) }
    var words: [UInt32] = []
    var chunk = [UInt32](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 4, 1 << 16, f) }
        words.append(contentsOf: chunk[0..<n])
        if n < 1 << 16 { break }
    }
    var i = 0
    func next() -> UInt32 {
        defer { i += 1 }
        return words[i]
    }
    var segments: [[Block]] = []
    for _ in 0..<next() {
        var blocks: [Block] = []
        for _ in 0..<next() {
            let count = Int(next())
            let gaps = Array(words[i..<i + count - 1])
            i += count - 1
            let deltas = Array(words[i..<i + count - 1])
            i += count - 1
            let motion = Array(words[i..<i + count])
            i += count
            blocks.append(Block(gaps: gaps, deltas: deltas, motion: motion))
        }
        segments.append(blocks)
    }
    return segments
}

// MARK: - Symbols and contexts (as coder_model.py)

let direct: UInt32 = 32
let alphabet = 65

@inline(__always) func symbolOf(_ v: UInt32) -> (symbol: Int, bits: Int) {
    if v < direct { return (Int(v), 0) }
    let b = 32 - v.leadingZeroBitCount
    return (Int(direct) + b, b - 1)
}

let gapContexts = 7
let deltaContexts = 9
let motionContexts = 6
let contextCount = gapContexts + deltaContexts + motionContexts

/// Class of the previous gap (edges 2, 4, 8, 16, 48, 96).
let gapClassTable: [UInt8] = (0..<128).map { p in
    UInt8([2, 4, 8, 16, 48, 96].firstIndex { p < $0 } ?? 6)
}
@inline(__always) func gapClass(_ previous: UInt32) -> Int {
    previous < 128 ? Int(gapClassTable.withUnsafeBufferPointer { $0[Int(previous)] }) : 6
}
@inline(__always) func deltaContext(gap: UInt32, previousZigzag: UInt32) -> Int {
    let g = gap < 8 ? 0 : gap < 48 ? 1 : 2
    let d = previousZigzag == 0 ? 0 : previousZigzag <= 2 ? 1 : 2
    return gapContexts + g * 3 + d
}
@inline(__always) func motionContext(_ previous: Int) -> Int {
    gapContexts + deltaContexts + (previous < 0 ? 5 : min(previous, 4))
}

// MARK: - rANS (32-bit state, 16-bit words, 12-bit frequencies)

#if TEN_BIT_TABLES
    let scaleBits: UInt32 = 10
#else
    let scaleBits: UInt32 = 12
#endif
let total: UInt32 = 1 << scaleBits
let lower: UInt32 = 1 << 16

struct Tables {
    var freq = [UInt32](repeating: 0, count: contextCount * alphabet)
    var cum = [UInt32](repeating: 0, count: contextCount * alphabet)
    /// Per context, 4,096 slots: symbol | (freq − 1) << 8 | bias << 20.
    var slots: [UInt32] = []
    var storedBits = 0

    init(counts: [Int]) {
        for c in 0..<contextCount {
            let row = counts[c * alphabet..<(c + 1) * alphabet]
            let sum = row.reduce(0, +)
            guard sum > 0 else { continue }
            var q = row.map { $0 == 0 ? 0 : max(1, Int((Double($0) * Double(total) / Double(sum)).rounded())) }
            let top = q.indices.max { q[$0] < q[$1] }!
            q[top] += Int(total) - q.reduce(0, +)
            precondition(q[top] >= 1)
            var running: UInt32 = 0
            for s in 0..<alphabet {
                freq[c * alphabet + s] = UInt32(q[s])
                cum[c * alphabet + s] = running
                running += UInt32(q[s])
                if q[s] > 0 { storedBits += 12 }
            }
            storedBits += 16
        }
    }

    mutating func buildSlots() {
        slots = [UInt32](repeating: 0, count: contextCount * Int(total))
        for c in 0..<contextCount {
            for s in 0..<alphabet {
                let f = freq[c * alphabet + s]
                guard f > 0 else { continue }
                let start = cum[c * alphabet + s]
                for k in 0..<f {
                    slots[c * Int(total) + Int(start + k)] = UInt32(s) | (f - 1) << 8 | k << 20
                }
            }
        }
    }
}

/// One coded block: three word streams (read forward), raw bits, three final states.
struct CodedBlock {
    var streams: [[UInt16]]
    var raw: [UInt64]
    var rawBits: Int
    var bytes: Int { streams.reduce(0) { $0 + 2 * $1.count } + (rawBits + 7) / 8 + 3 * 4 }
}

func contextsAndSymbols(_ b: Block) -> [(stream: Int, context: Int, value: UInt32)] {
    var out: [(Int, Int, UInt32)] = []
    var previousGap: UInt32 = 0
    var previousZigzag: UInt32 = 0
    var previousMotion = -1
    out.append((2, motionContext(previousMotion), b.motion[0]))
    previousMotion = Int(b.motion[0])
    for i in 1..<b.count {
        let gap = b.gaps[i - 1]
        out.append((0, gapClass(previousGap), gap))
        previousGap = gap
        let z = b.deltas[i - 1]
        out.append((1, deltaContext(gap: gap, previousZigzag: previousZigzag), z))
        previousZigzag = z
        out.append((2, motionContext(previousMotion), b.motion[i]))
        previousMotion = Int(b.motion[i])
    }
    return out
}

func encode(_ b: Block, _ t: Tables) -> CodedBlock {
    let symbols = contextsAndSymbols(b)
    // Raw bits in decoding order.
    var raw: [UInt64] = [0]
    var rawBits = 0
    for (_, _, v) in symbols {
        let (_, bits) = symbolOf(v)
        guard bits > 0 else { continue }
        let extra = UInt64(v) & ((1 << UInt64(bits)) - 1)
        let at = rawBits & 63
        raw[raw.count - 1] |= extra << UInt64(at)
        if at + bits >= 64 {
            raw.append(at == 0 ? 0 : extra >> UInt64(64 - at))
        }
        rawBits += bits
    }
    // rANS in reverse; each stream's words come out last first.
    var states = [UInt32](repeating: lower, count: 3)
    var words: [[UInt16]] = [[], [], []]
    for (stream, context, v) in symbols.reversed() {
        let s = symbolOf(v).symbol
        let f = t.freq[context * alphabet + s]
        let c = t.cum[context * alphabet + s]
        precondition(f > 0)
        var x = states[stream]
        // A context with one symbol has f = 4,096: the limit is 2^32, past any state.
        let limit = UInt64((lower >> scaleBits) << 16) * UInt64(f)
        while UInt64(x) >= limit {
            words[stream].append(UInt16(truncatingIfNeeded: x))
            x >>= 16
        }
        x = ((x / f) << scaleBits) + (x % f) + c
        states[stream] = x
    }
    var streams: [[UInt16]] = []
    for k in 0..<3 {
        // The final state first (two words), then the words in the order the decoder reads them.
        streams.append([UInt16(states[k] >> 16), UInt16(truncatingIfNeeded: states[k])] + words[k].reversed())
    }
    return CodedBlock(streams: streams, raw: raw, rawBits: rawBits)
}

struct Decoded {
    var starts: [Int64]
    var mantissas: [Int64]
    var motion: [UInt32]
    init(_ n: Int) {
        starts = [Int64](repeating: 0, count: n)
        mantissas = [Int64](repeating: 0, count: n)
        motion = [UInt32](repeating: 0, count: n)
    }
}

@inline(__always) func unzigzag(_ z: UInt32) -> Int64 { Int64(z >> 1) ^ -Int64(z & 1) }

struct BitReader {
    let words: UnsafePointer<UInt64>
    var position = 0
    @inline(__always) mutating func read(_ n: Int) -> UInt32 {
        let w = position >> 6
        let at = UInt64(position & 63)
        var v = words[w] >> at
        if at + UInt64(n) > 64 { v |= words[w + 1] << (64 - at) }
        position += n
        return UInt32(truncatingIfNeeded: v & ((1 << UInt64(n)) - 1))
    }
}

struct WordStream {
    var p: UnsafePointer<UInt16>
    var x: UInt32
    init(_ p: UnsafePointer<UInt16>) {
        x = UInt32(p[0]) << 16 | UInt32(p[1])
        self.p = p + 2
    }
    @inline(__always) mutating func next(_ slots: UnsafePointer<UInt32>, _ context: Int, _ bits: inout BitReader)
        -> UInt32
    {
        // `&<<`: a checked shift by another integer type decoded five heavy years at 61 rather than 73 M
        // samples/s (three alternating runs).
        let e = slots[context &<< Int(scaleBits) + Int(x & (total - 1))]
        let s = e & 255
        x = ((e >> 8 & (total - 1)) + 1) &* (x >> scaleBits) &+ (e >> 20)
        if x < lower {
            x = x << 16 | UInt32(p.pointee)
            p += 1
        }
        if s < direct { return s }
        let b = Int(s - direct)
        return 1 << UInt32(b - 1) | bits.read(b - 1)
    }
}

func decode(_ c: CodedBlock, count n: Int, _ t: Tables, into d: inout Decoded) {
    t.slots.withUnsafeBufferPointer { slotBuffer in
        let slots = slotBuffer.baseAddress!
        c.streams[0].withUnsafeBufferPointer { g in
            c.streams[1].withUnsafeBufferPointer { m in
                c.streams[2].withUnsafeBufferPointer { o in
                    c.raw.withUnsafeBufferPointer { r in
                        var bits = BitReader(words: r.baseAddress!)
                        var gs = WordStream(g.baseAddress!)
                        var ms = WordStream(m.baseAddress!)
                        var os = WordStream(o.baseAddress!)
                        d.starts.withUnsafeMutableBufferPointer { starts in
                            d.mantissas.withUnsafeMutableBufferPointer { mantissas in
                                d.motion.withUnsafeMutableBufferPointer { motion in
                                    var previousMotion = os.next(slots, motionContext(-1), &bits)
                                    motion[0] = previousMotion
                                    starts[0] = 0
                                    mantissas[0] = 0
                                    var start: Int64 = 0
                                    var mantissa: Int64 = 0
                                    var previousGap: UInt32 = 0
                                    var previousZigzag: UInt32 = 0
                                    for i in 1..<n {
                                        let gap = gs.next(slots, gapClass(previousGap), &bits)
                                        start &+= Int64(gap)
                                        starts[i] = start
                                        previousGap = gap
                                        let z = ms.next(
                                            slots, deltaContext(gap: gap, previousZigzag: previousZigzag), &bits)
                                        mantissa &+= unzigzag(z)
                                        mantissas[i] = mantissa
                                        previousZigzag = z
                                        previousMotion = os.next(slots, motionContext(Int(previousMotion)), &bits)
                                        motion[i] = previousMotion
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

// MARK: - Bit-packed as segment-v3 (§5.1: runs of 128, a reference and width a run)

struct PackedBlock {
    var bytes: [UInt8]
}

func pack(_ values: [UInt32], into out: inout [UInt8], asDeltas: Bool) {
    // Deltas are packed as given (already differences); values (motion) likewise: a run's
    // reference is its minimum, its width that of max − min.
    var i = 0
    while i < values.count {
        let run = values[i..<min(i + 128, values.count)]
        let lo = run.min()!
        let width = UInt8(32 - (run.max()! - lo).leadingZeroBitCount)
        out.append(contentsOf: withUnsafeBytes(of: lo.littleEndian) { Array($0) })
        out.append(width)
        var acc: UInt64 = 0
        var filled = 0
        for v in run {
            acc |= UInt64(v - lo) << UInt64(filled)
            filled += Int(width)
            while filled >= 8 {
                out.append(UInt8(truncatingIfNeeded: acc))
                acc >>= 8
                filled -= 8
            }
        }
        if filled > 0 { out.append(UInt8(truncatingIfNeeded: acc)) }
        i += 128
    }
}

func packBlock(_ b: Block) -> (PackedBlock, Int) {
    var out: [UInt8] = []
    pack(b.gaps, into: &out, asDeltas: true)
    pack(b.deltas, into: &out, asDeltas: true)
    pack(b.motion, into: &out, asDeltas: false)
    // Stored size as segment-v3 would have it: a varint reference (~1-2 B) rather than 4.
    let runs = (b.count - 1 + 127) / 128 * 2 + (b.count + 127) / 128
    let size = out.count - runs * 4 + runs * 2
    out.append(contentsOf: [UInt8](repeating: 0, count: 8))  // room for 8-byte loads
    return (PackedBlock(bytes: out), size)
}

@inline(__always) func unpackRuns(
    _ p: UnsafePointer<UInt8>, _ at: inout Int, count: Int, _ emit: (Int, UInt32) -> Void
) {
    var i = 0
    while i < count {
        let run = min(128, count - i)
        let lo = UnsafeRawPointer(p + at).loadUnaligned(as: UInt32.self)
        let width = Int(p[at + 4])
        at += 5
        let mask: UInt64 = width == 0 ? 0 : (1 << UInt64(width)) - 1
        var bit = 0
        for k in 0..<run {
            let word = UnsafeRawPointer(p + at + bit >> 3).loadUnaligned(as: UInt64.self)
            emit(i + k, lo &+ UInt32(truncatingIfNeeded: (word >> UInt64(bit & 7)) & mask))
            bit += width
        }
        at += (run * width + 7) >> 3
        i += run
    }
}

func decodePacked(_ b: PackedBlock, count n: Int, into d: inout Decoded) {
    b.bytes.withUnsafeBufferPointer { buffer in
        let p = buffer.baseAddress!
        var at = 0
        d.starts.withUnsafeMutableBufferPointer { starts in
            d.mantissas.withUnsafeMutableBufferPointer { mantissas in
                d.motion.withUnsafeMutableBufferPointer { motion in
                    var start: Int64 = 0
                    starts[0] = 0
                    unpackRuns(p, &at, count: n - 1) { k, v in
                        start &+= Int64(v)
                        starts[k + 1] = start
                    }
                    var mantissa: Int64 = 0
                    mantissas[0] = 0
                    unpackRuns(p, &at, count: n - 1) { k, v in
                        mantissa &+= unzigzag(v)
                        mantissas[k + 1] = mantissa
                    }
                    unpackRuns(p, &at, count: n) { k, v in motion[k] = v }
                }
            }
        }
    }
}

// MARK: - Run

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func check(_ d: Decoded, _ b: Block) {
    var start: Int64 = 0
    var mantissa: Int64 = 0
    for i in 0..<b.count {
        if i > 0 {
            start += Int64(b.gaps[i - 1])
            mantissa += unzigzag(b.deltas[i - 1])
        }
        precondition(d.starts[i] == start && d.mantissas[i] == mantissa && d.motion[i] == b.motion[i], "sample \(i)")
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fatalError("usage: rans_experiment COLUMNS_FILE [ROUNDS]") }
let rounds = arguments.count > 2 ? Int(arguments[2])! : 9
let segments = readColumns(arguments[1])
var samples = 0
var codedBytes = 0
var tableBits = 0
var packedBytes = 0
var coded: [[(CodedBlock, Int)]] = []
var packed: [[(PackedBlock, Int)]] = []
var tables: [Tables] = []
var longest = 0
for blocks in segments {
    var counts = [Int](repeating: 0, count: contextCount * alphabet)
    for b in blocks {
        for (stream, context, v) in contextsAndSymbols(b) {
            _ = stream
            counts[context * alphabet + symbolOf(v).symbol] += 1
        }
    }
    var t = Tables(counts: counts)
    t.buildSlots()
    tableBits += t.storedBits
    var segmentCoded: [(CodedBlock, Int)] = []
    var segmentPacked: [(PackedBlock, Int)] = []
    for b in blocks {
        let c = encode(b, t)
        codedBytes += c.bytes
        segmentCoded.append((c, b.count))
        let (p, size) = packBlock(b)
        packedBytes += size
        segmentPacked.append((p, b.count))
        samples += b.count
        longest = max(longest, b.count)
        var d = Decoded(b.count)
        decode(c, count: b.count, t, into: &d)
        check(d, b)
        decodePacked(p, count: b.count, into: &d)
        check(d, b)
    }
    coded.append(segmentCoded)
    packed.append(segmentPacked)
    tables.append(t)
}
let blockCount = segments.reduce(0) { $0 + $1.count }
func fixed(_ v: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let n = Int((v * scale).rounded())
    let whole = String(n / Int(scale))
    guard digits > 0 else { return whole }
    let fraction = String(n % Int(scale))
    return whole + "." + String(repeating: "0", count: digits - fraction.count) + fraction
}
let n = Double(samples)
print("\(samples) samples in \(segments.count) segments, \(blockCount) blocks (\(arguments[1]))")
print("bit-packed (runs of 128):      " + fixed(Double(packedBytes) / n, 3) + " B/sample")
let tableBytes = Double(tableBits / 8)
print(
    "rANS, tables per segment:      " + fixed((Double(codedBytes) + tableBytes) / n, 3) + " B/sample (tables "
        + fixed(tableBytes / n, 3) + ")")

var scratch = Decoded(longest)
func best(_ body: () -> Void) -> Double {
    var times: [Double] = []
    for _ in 0..<rounds {
        let t0 = now()
        body()
        times.append(now() - t0)
    }
    return times.sorted()[rounds / 2]
}
let packedTime = best {
    for segment in packed { for (b, n) in segment { decodePacked(b, count: n, into: &scratch) } }
}
let codedTime = best {
    for (k, segment) in coded.enumerated() { for (b, n) in segment { decode(b, count: n, tables[k], into: &scratch) } }
}
var rebuilt = tables
let tableTime = best {
    for k in rebuilt.indices { rebuilt[k].buildSlots() }
}
print(
    "decode, bit-packed:            " + fixed(n / packedTime / 1e6, 1) + " M samples/s ("
        + fixed(packedTime * 1e3, 2) + " ms, median of \(rounds))")
print(
    "decode, rANS:                  " + fixed(n / codedTime / 1e6, 1) + " M samples/s ("
        + fixed(codedTime * 1e3, 2) + " ms)")
print(
    "decoding tables, per segment:  " + fixed(tableTime / Double(tables.count) * 1e6, 1) + " µs ("
        + "\(contextCount) contexts × \(total) slots)")
