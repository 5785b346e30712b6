#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TSDB

func environment(_ name: String) -> String? {
    guard let v = getenv(name) else { return nil }
    let s = String(cString: v)
    return s.isEmpty ? nil : s
}

/// Buffered standard output: query results can be millions of lines.
final class OutputBuffer {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func write(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        // Anything print() left in stdio's buffer goes first, so output keeps its order.
        fflush(nil)
        buffer.withUnsafeBytes { p in
            var done = 0
            while done < p.count {
                let n = systemWrite(1, p.baseAddress! + done, p.count - done)
                if n <= 0 { if errno == EINTR { continue }; break }
                done += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
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
            if n <= 0 { if errno == EINTR { continue }; return }
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
    while v >= 1000 && u < units.count - 1 { v /= 1000; u += 1 }
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

func formatCount(_ n: Int) -> String {
    let s = String(n)
    var out = ""
    for (i, c) in s.enumerated() {
        if i > 0 && (s.count - i) % 3 == 0 && c != "-" { out.append(",") }
        out.append(c)
    }
    return out
}

/// Pads columns for a plain-text table.
func renderTable(_ header: [String], _ rows: [[String]]) -> String {
    var widths = header.map(\.count)
    for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { i, c in c + String(repeating: " ", count: widths[i] - c.count) }.joined(separator: "  ")
    }
    return ([line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line)).joined(separator: "\n") + "\n"
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
    for line in String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kib = line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        return kib.map { $0 * 1024 }
    }
    return nil
}
