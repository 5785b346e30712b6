/// A small SVG writer: elements appended as text, numbers written with fixed precision and no
/// locale, so the same chart always gives the same bytes.
struct SVGDocument {
    let width: Double
    let height: Double
    private(set) var body = ""

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// `v` with at most `digits` decimals, trailing zeros trimmed (`12.5`, `3`, `-0.25`).
    static func number(_ v: Double, digits: Int = 2) -> String {
        guard v.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (v * scale).rounded()
        if scaled == 0 { return "0" }
        let negative = scaled < 0
        let whole = Int64(abs(scaled))
        let integer = whole / Int64(scale)
        var fraction = String(whole % Int64(scale))
        if digits > 0 {
            fraction = String(repeating: "0", count: digits - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
        }
        return (negative ? "-" : "") + String(integer) + (fraction.isEmpty || digits == 0 ? "" : "." + fraction)
    }

    static func escape(_ text: String) -> String { XMLEscape.text(text) }

    mutating func raw(_ text: String) { body += text + "\n" }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, cls: String) {
        let n = { Self.number($0) }
        raw("<line class=\"\(cls)\" x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\"/>")
    }

    mutating func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, cls: String, title: String? = nil) {
        let n = { Self.number($0) }
        let attrs = "class=\"\(cls)\" x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(max(w, 0)))\" height=\"\(n(max(h, 0)))\""
        if let title {
            raw("<rect \(attrs)><title>\(Self.escape(title))</title></rect>")
        } else {
            raw("<rect \(attrs)/>")
        }
    }

    mutating func circle(_ x: Double, _ y: Double, r: Double, cls: String, title: String? = nil) {
        let n = { Self.number($0) }
        let attrs = "class=\"\(cls)\" cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(r))\""
        if let title {
            raw("<circle \(attrs)><title>\(Self.escape(title))</title></circle>")
        } else {
            raw("<circle \(attrs)/>")
        }
    }

    /// A path through runs of points: each run is its own subpath, so gaps stay gaps.
    mutating func polyline(_ runs: [[(Double, Double)]], cls: String) {
        var d = ""
        for run in runs where !run.isEmpty {
            for (k, p) in run.enumerated() {
                d += (k == 0 ? "M" : "L") + Self.number(p.0) + " " + Self.number(p.1)
            }
        }
        guard !d.isEmpty else { return }
        raw("<path class=\"\(cls)\" d=\"\(d)\"/>")
    }

    /// Closed areas between an upper and a lower line, one per run (the min–max band).
    mutating func band(_ runs: [[(x: Double, low: Double, high: Double)]], cls: String) {
        var d = ""
        for run in runs where !run.isEmpty {
            for (k, p) in run.enumerated() { d += (k == 0 ? "M" : "L") + Self.number(p.x) + " " + Self.number(p.high) }
            for p in run.reversed() { d += "L" + Self.number(p.x) + " " + Self.number(p.low) }
            d += "Z"
        }
        guard !d.isEmpty else { return }
        raw("<path class=\"\(cls)\" d=\"\(d)\"/>")
    }

    mutating func text(_ x: Double, _ y: Double, _ s: String, cls: String, anchor: String = "start") {
        let n = { Self.number($0) }
        raw("<text class=\"\(cls)\" x=\"\(n(x))\" y=\"\(n(y))\" text-anchor=\"\(anchor)\">\(Self.escape(s))</text>")
    }

    /// The document; `style` is CSS for the classes used (light and dark through
    /// `prefers-color-scheme`, or one fixed theme).
    func rendered(title: String, style: String) -> String {
        let w = Self.number(width)
        let h = Self.number(height)
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(w)" height="\(h)" viewBox="0 0 \(w) \(h)" \
            role="img" aria-label="\(Self.escape(title))">
            <title>\(Self.escape(title))</title>
            <desc>\(Chart.generatorMark)</desc>
            <style>\(style)</style>
            <rect class="background" x="0" y="0" width="\(w)" height="\(h)"/>
            \(body)</svg>

            """
    }
}

/// Text for XML content or a quoted attribute: SVG here, GPX routes in the command line.
package enum XMLEscape {
    package static func text(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default:
                // Control characters are not allowed in XML 1.0 at all.
                if c.value < 0x20 && c != "\n" && c != "\t" { out += "\u{FFFD}" } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }
}
