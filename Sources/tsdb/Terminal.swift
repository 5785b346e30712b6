import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func environment(_ name: String) -> String? {
    guard let v = getenv(name) else { return nil }
    let s = String(cString: v)
    return s.isEmpty ? nil : s
}

/// Buffered standard output: query results can be millions of lines.
///
/// A failed write is an error (one line on stderr, exit status 1); a reader that went away
/// (`tsdb query … | head`) ends the command quietly with status 0.
final class OutputBuffer {
    private var pending: [UInt8] = []

    init() { pending.reserveCapacity(1 << 16) }

    func write(_ s: String) {
        pending.append(contentsOf: s.utf8)
        if pending.count >= 1 << 16 { flush() }
    }

    func write(bytes: [UInt8]) { bytes.withUnsafeBufferPointer { write(bytes: $0) } }

    func write(bytes: UnsafeBufferPointer<UInt8>) {
        // Long runs (rows a second thread held back) go out as they are, not copied in first.
        if bytes.count >= 1 << 16 {
            flush()
            writeOut(UnsafeRawBufferPointer(bytes))
            return
        }
        pending.append(contentsOf: bytes)
        if pending.count >= 1 << 16 { flush() }
    }

    func flush() {
        // Lines output() left in the shared buffer go first, so output keeps its order.
        if self !== standardOutput { standardOutput.flush() }
        pending.withUnsafeBytes { writeOut($0) }
        pending.removeAll(keepingCapacity: true)
    }

    private func writeOut(_ p: UnsafeRawBufferPointer) {
        var done = 0
        while done < p.count {
            let n = systemWrite(1, p.baseAddress! + done, p.count - done)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { StandardOutput.failed(errno: n < 0 ? errno : EIO) }
            done += n
        }
    }

    deinit { flush() }
}

/// What happens when standard output cannot be written.
enum StandardOutput {
    /// Ignores SIGPIPE so a closed pipe shows up as EPIPE from write(2), handled below.
    static func prepare() { signal(SIGPIPE, SIG_IGN) }

    /// Writes out what output() buffered.
    static func flush() { standardOutput.flush() }

    static func failed(errno code: Int32) -> Never {
        if code == EPIPE { exit(0) }
        writeStandardError("tsdb: cannot write the output: \(String(cString: strerror(code)))\n")
        exit(1)
    }
}

/// Where output() writes: the command line is single-threaded, and every write goes through
/// ``OutputBuffer`` so that a failed write is noticed.
nonisolated(unsafe) let standardOutput = OutputBuffer()

/// Writes a line to stdout through ``standardOutput``; the command line uses this, never Swift's
/// `print` (which writes through stdio and ignores write errors).
func output(_ text: String = "", terminator: String = "\n") {
    standardOutput.write(text + terminator)
}

func printError(_ message: String) {
    writeStandardError(message + "\n")
}

func writeStandardError(_ text: String) {
    var text = text
    text.withUTF8 { p in
        var done = 0
        while done < p.count {
            let n = write(2, p.baseAddress! + done, p.count - done)
            if n <= 0 {
                if errno == EINTR { continue }
                return
            }
            done += n
        }
    }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
struct ProgressBar {
    let label: String
    let enabled = isatty(2) == 1
    private var lastDrawn = -1

    init(_ label: String) { self.label = label }

    mutating func update(done: Int, total: Int, detail: String = "") {
        guard enabled, total > 0 else { return }
        let permille = done * 1000 / total
        guard permille != lastDrawn else { return }
        lastDrawn = permille
        let width = 30
        let filled = done * width / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        writeStandardError("\r\(label) \(bar) \(permille / 10)% \(detail)\u{1B}[K")
    }

    func finish() {
        if enabled { writeStandardError("\r\u{1B}[K") }
    }
}

func formatBytes(_ n: Int) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"]
    var v = Double(n)
    var u = 0
    while v >= 1000 && u < units.count - 1 {
        v /= 1000
        u += 1
    }
    return u == 0 ? "\(n) B" : fixed(v, v < 10 ? 2 : 1) + " " + units[u]
}

func fixed(_ v: Double, _ digits: Int) -> String {
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let r = (v * p).rounded() / p
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let have = s.distance(from: dot, to: s.endIndex) - 1
        if have < digits { s += String(repeating: "0", count: digits - have) }
        if digits == 0 { s = String(s[..<dot]) }
    } else if digits > 0 {
        s += "." + String(repeating: "0", count: digits)
    }
    return s
}

/// `parts` with `separator` between them, as `joined(separator:)` makes them: that generic
/// function has the runtime build its collection's metadata on first use, 175K instructions of a
/// compaction that found nothing to do (5.07M in all; callgrind).
func joining(_ parts: [String], _ separator: String) -> String {
    var out = ""
    for (i, part) in parts.enumerated() {
        if i > 0 { out += separator }
        out += part
    }
    return out
}

/// "1 sample", "2,400 samples".
func plural(_ n: Int, _ noun: String) -> String {
    formatCount(n) + " " + (n == 1 ? noun : noun + "s")
}

func formatCount(_ n: Int) -> String {
    let s = String(n)
    var out = ""
    for (i, c) in s.enumerated() {
        if i > 0 && (s.count - i) % 3 == 0 && c != "-" { out.append(",") }
        out.append(c)
    }
    return out
}

/// Pads columns for a plain-text table; control characters in cells are shown escaped.
func renderTable(_ header: [String], _ rows: [[String]]) -> String {
    let rows = rows.map { $0.map(displaySafe) }
    // Each cell's width counted once, and lines made as bytes: padding each cell with a string of
    // its own and joining them was 7.5 M of a year's 33 M instructions of `tsdb workouts`.
    let counts = rows.map { $0.map(\.count) }
    var widths = header.map(\.count)
    for r in counts { for (i, n) in r.enumerated() { widths[i] = max(widths[i], n) } }
    var out: [UInt8] = []
    func line(_ cells: [String], _ counts: [Int]) {
        for (i, cell) in cells.enumerated() {
            if i > 0 { out.append(contentsOf: "  ".utf8) }
            out.append(contentsOf: cell.utf8)
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: widths[i] - counts[i]))
        }
        out.append(UInt8(ascii: "\n"))
    }
    line(header, header.map(\.count))
    line(widths.map { String(repeating: "-", count: $0) }, widths)
    for (r, n) in zip(rows, counts) { line(r, n) }
    return String(decoding: out, as: UTF8.self)
}

/// A plain-text table written as rows arrive: column widths come from the first rows (held
/// back until there are enough), and a later, wider cell just widens its own line.
struct StreamingTable {
    let header: [String]
    private var held: [[String]] = []
    /// Column widths, known once the first rows (up to ``sample``) are out.
    private(set) var widths: [Int]?
    static let sample = 256

    init(header: [String]) { self.header = header }

    mutating func add(_ cells: [String], to out: OutputBuffer) {
        let cells = cells.map(displaySafe)
        if let widths {
            out.write(Self.line(cells, widths))
            return
        }
        held.append(cells)
        if held.count >= Self.sample { release(to: out) }
    }

    mutating func finish(to out: OutputBuffer) { if widths == nil { release(to: out) } }

    private mutating func release(to out: OutputBuffer) {
        var w = header.map(\.count)
        for r in held { for (i, c) in r.enumerated() { w[i] = max(w[i], c.count) } }
        widths = w
        out.write(Self.line(header, w) + Self.line(w.map { String(repeating: "-", count: $0) }, w))
        for r in held { out.write(Self.line(r, w)) }
        held = []
    }

    static func line(_ cells: [String], _ widths: [Int]) -> String {
        joined(
            cells.enumerated().map { i, c in c + String(repeating: " ", count: max(0, widths[i] - c.count)) }, by: "  ")
            + "\n"
    }
}

/// `parts` with `separator` between them. By hand: the standard library's `joined(separator:)` is
/// not specialised here, and its first call has the runtime search every conformance in the program
/// for its element type, faulting their pages in from a 34 MB binary (~0.1 ms of a one-query
/// process in a perf profile of the year's daily heart rate).
func joined(_ parts: [String], by separator: String) -> String {
    var text = ""
    for (i, part) in parts.enumerated() { text += i == 0 ? part : separator + part }
    return text
}

/// A Markdown table; control characters are escaped and `|` in cells is escaped as `\|`.
func renderMarkdown(_ header: [String], _ rows: [[String]]) -> String {
    var text = markdownLine(header) + "|" + joined(header.map { _ in "---" }, by: "|") + "|\n"
    for row in rows { text += markdownLine(row) }
    return text
}

func markdownLine(_ cells: [String]) -> String {
    "| " + joined(cells.map { displaySafe($0).replacingAll("|", with: "\\|") }, by: " | ") + " |\n"
}

/// Text safe to show on a terminal: control characters (which could move the cursor, change
/// colours or retitle the window) become visible escapes such as `\u{1B}`.
func displaySafe(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        if isControl(scalar) {
            out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

private func isControl(_ s: Unicode.Scalar) -> Bool { s.value < 0x20 || (0x7F...0x9F).contains(s.value) }

/// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
func jsonString(_ text: String) -> String {
    // Most texts need no escape: quoted whole, not scalar by scalar.
    let plain = text.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    if plain { return "\"" + text + "\"" }
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}

private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }

/// This process's peak resident memory in bytes (VmHWM from /proc/self/status), nil where not
/// available. getrusage's ru_maxrss is not used: on Linux it can include the memory of the
/// parent that spawned us, from before exec.
func peakResidentMemory() -> Int? {
    let fd = open("/proc/self/status", O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard n > 0 else { return nil }
    // Read as bytes: splitting the text into lines took 0.6M instructions, a tenth of a
    // compaction with nothing to do (callgrind). VmHWM, not getrusage's ru_maxrss, which keeps
    // the high-water mark of the process image before exec (a Python parent's, for instance).
    // Found with a plain loop: Foundation's firstRange(of:) took 0.3M instructions here.
    let text = buffer[0..<n]
    let key = Array("\nVmHWM:".utf8)
    guard n >= key.count,
        let at = (0...(n - key.count)).first(where: { start in
            key.indices.allSatisfy { text[start + $0] == key[$0] }
        })
    else { return nil }
    var i = at + key.count
    while i < n, text[i] == 0x20 || text[i] == 0x09 { i += 1 }
    var kib = 0
    var digits = 0
    while i < n, (0x30...0x39).contains(text[i]) {
        kib = kib * 10 + Int(text[i] - 0x30)
        digits += 1
        i += 1
    }
    return digits > 0 ? kib * 1024 : nil
}
