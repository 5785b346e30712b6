import TSDB

/// Ticks of a time axis at local calendar boundaries in a zone: hours, days, months or years,
/// placed with the zone's rules, so a DST day has its 23 or 25 hours and midnight ticks stay on
/// local midnight.
struct TimeAxis {
    enum Unit { case minute, hour, day, month, year }

    struct Tick {
        var instant: Int64
        var label: String
    }

    let zone: TimeZoneRules
    let from: Int64
    let to: Int64

    /// Steps from finest to coarsest; the first giving at most `maxTicks` ticks is used.
    static let steps: [(Unit, Int64)] = [
        (.minute, 1), (.minute, 5), (.minute, 15), (.minute, 30), (.hour, 1), (.hour, 3), (.hour, 6), (.hour, 12),
        (.day, 1), (.day, 2), (.day, 7), (.day, 14), (.month, 1), (.month, 3), (.month, 6), (.year, 1), (.year, 2),
        (.year, 5), (.year, 10), (.year, 50),
    ]

    func ticks(maxTicks: Int) -> [Tick] {
        let span = Double(to - from) / 1e6
        for (unit, step) in Self.steps {
            let approximate: Double
            switch unit {
            case .minute: approximate = 60 * Double(step)
            case .hour: approximate = 3600 * Double(step)
            case .day: approximate = 86_400 * Double(step)
            case .month: approximate = 30.4 * 86_400 * Double(step)
            case .year: approximate = 365.25 * 86_400 * Double(step)
            }
            if span / approximate <= Double(maxTicks) { return ticks(unit, step) }
        }
        return []
    }

    /// Local wall-clock fields of an instant.
    func local(_ micros: Int64) -> (year: Int, month: Int, day: Int, seconds: Int64) {
        let local = Int64(zone.offset(atMicros: micros)) + micros / 1_000_000
        let (days, seconds) = ISO8601.floorDivide(local, 86_400)
        let (y, m, d) = civilDate(days)
        return (y, m, d, seconds)
    }

    private func ticks(_ unit: Unit, _ step: Int64) -> [Tick] {
        var out: [Tick] = []
        let start = local(from)
        var (y, m, d) = (start.year, start.month, start.day)
        var second = unit == .minute || unit == .hour ? start.seconds : 0
        let stepSeconds = unit == .minute ? step * 60 : step * 3600
        // Align to the step: days of month 1, 1+step…; months 1, 1+step…; years divisible by step.
        switch unit {
        case .minute, .hour: second = second / stepSeconds * stepSeconds
        case .day: d = step == 1 ? d : 1 + (d - 1) / Int(step) * Int(step)
        case .month:
            d = 1
            m = 1 + (m - 1) / Int(step) * Int(step)
        case .year:
            (m, d) = (1, 1)
            y = y / Int(step) * Int(step)
        }
        var guardCount = 0
        while guardCount < 10_000 {
            guardCount += 1
            let instant: Int64
            if unit == .day || unit == .month || unit == .year {
                instant = zone.startOfDay(daysSinceEpoch(y, m, d))
            } else {
                instant = zone.utc(fromLocal: daysSinceEpoch(y, m, d) * 86_400 + second) * 1_000_000
            }
            if instant >= to { break }
            if instant >= from && out.last.map({ $0.instant < instant }) ?? true {
                out.append(Tick(instant: instant, label: label(unit, y, m, d, second)))
            }
            switch unit {
            case .minute, .hour:
                second += stepSeconds
                if second >= 86_400 {
                    second -= 86_400
                    (y, m, d) = civilDate(daysSinceEpoch(y, m, d) + 1)
                }
            case .day where step == 1:
                (y, m, d) = civilDate(daysSinceEpoch(y, m, d) + 1)
            case .day:
                // Ticks every n days restart on the 1st of each month (1, 8, 15, 22), and skip a
                // tick that would crowd the next month's first.
                let length = ISO8601.daysInMonth(year: y, month: m)
                if d + Int(step) + Int(step) / 2 <= length {
                    d += Int(step)
                } else {
                    (y, m, d) = m == 12 ? (y + 1, 1, 1) : (y, m + 1, 1)
                }
            case .month:
                m += Int(step)
                while m > 12 {
                    m -= 12
                    y += 1
                }
            case .year: y += Int(step)
            }
        }
        return out
    }

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private func label(_ unit: Unit, _ y: Int, _ m: Int, _ d: Int, _ second: Int64) -> String {
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        switch unit {
        case .minute, .hour:
            let time = two(second / 3600) + ":" + two(second % 3600 / 60)
            return second == 0 ? "\(d) \(Self.monthNames[m - 1])" : time
        case .day: return "\(d) \(Self.monthNames[m - 1])"
        case .month: return m == 1 ? "\(Self.monthNames[0]) \(y)" : Self.monthNames[m - 1]
        case .year: return String(y)
        }
    }
}

/// "Nice" value ticks: 1, 2 or 5 times a power of ten, covering `[low, high]`.
struct ValueAxis {
    let low: Double
    let high: Double
    let ticks: [Double]

    /// Fixed ticks (hours of the day on a calendar chart).
    init(ticks: [Double]) {
        low = ticks.first ?? 0
        high = ticks.last ?? 1
        self.ticks = ticks
    }

    init(low: Double, high: Double, count: Int = 5) {
        var (lo, hi) = (low, high)
        if !(lo.isFinite && hi.isFinite) { (lo, hi) = (0, 1) }
        if hi - lo < 1e-12 { (lo, hi) = (lo - 1, hi + 1) }
        let raw = (hi - lo) / Double(max(count, 1))
        var power = 1.0
        while power * 10 <= raw { power *= 10 }
        while power > raw { power /= 10 }
        let step = [1.0, 2.0, 5.0, 10.0].map { $0 * power }.first { $0 >= raw } ?? 10 * power
        let first = (lo / step).rounded(.down) * step
        let last = (hi / step).rounded(.up) * step
        var t: [Double] = []
        var v = first
        while v <= last + step / 2 && t.count < 50 {
            t.append(abs(v) < step / 1e6 ? 0 : v)
            v += step
        }
        self.low = first
        self.high = last
        self.ticks = t
    }

    /// A tick's label: as few decimals as the step needs.
    func label(_ v: Double) -> String {
        let step = ticks.count > 1 ? ticks[1] - ticks[0] : 1
        var digits = 0
        var s = step
        while s < 1 && digits < 6 {
            s *= 10
            digits += 1
        }
        let text = SVGDocument.number(v, digits: digits)
        return abs(v) >= 10_000 && digits == 0 ? thousands(text) : text
    }

    private func thousands(_ text: String) -> String {
        let negative = text.hasPrefix("-")
        let digits = Array(negative ? text.dropFirst() : Substring(text))
        var out = ""
        for (k, c) in digits.enumerated() {
            if k > 0 && (digits.count - k) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (negative ? "-" : "") + out
    }
}

/// Days since 1970-01-01 of a date, and the date of a day number (the engine's calendar).
func daysSinceEpoch(_ year: Int, _ month: Int, _ day: Int) -> Int64 { ISO8601.days(year: year, month: month, day: day) }

func civilDate(_ days: Int64) -> (Int, Int, Int) { ISO8601.civil(days) }
