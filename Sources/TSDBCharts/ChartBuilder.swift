import TSDB

/// Chooses the chart that fits a type and fills it from the store, with the same computations as
/// `tsdb query`, `sleep` and `workouts`: discrete types as a min–max band with the mean line (or
/// points with a trend when samples are few), cumulative ones as bars of the de-duplicated sum,
/// sleep as stages stacked per night, other categories as minutes per bucket, workouts on a
/// day-by-time calendar.
public enum ChartBuilder {
    /// Fewer samples than this in the range are drawn one by one (body mass, VO2 max…).
    public static let pointLimit = 600

    public static func chart(
        _ store: Store, type: String, from: Int64?, to: Int64?, bucket: BucketSpec? = nil,
        zone: TimeZoneRules, source: String? = nil, bySource: Bool = false
    ) throws(TSDBError) -> Chart {
        let info = store.types.first { $0.type == type }
        let lo = from ?? info?.firstStart ?? 0
        // Without a range, the data's span as `tsdb query` takes it: to the last sample's end.
        let maxEnd = store.segmentEntries.filter { $0.type == type }.map(\.maxEnd).max()
        let hi = to ?? (info.map { max($0.lastStart + 1, maxEnd ?? $0.lastStart + 1) } ?? lo + 86_400_000_000)
        let kind = store.catalog.kind(of: type)
        var options = AggregateOptions()
        options.zone = zone
        options.source = source
        options.bucket = bucket ?? autoBucket(span: hi - lo, kind: kind)
        let name = store.catalog.displayName(type)
        var chart = Chart(
            title: name, subtitle: subtitle(lo, hi, zone, options.bucket, kind), unit: "", zone: zone, from: lo, to: hi,
            body: .points([]))
        switch kind {
        case .discrete:
            chart.unit = try unit(of: type, store, lo, hi)
            let count =
                try store.aggregate(type, from: lo, to: hi, options: countOnly(options)).rows.first?
                .values[.count] ?? 0
            if count <= Double(pointLimit) && bucket == nil {
                chart.subtitle = subtitle(lo, hi, zone, nil, kind) + " · \(Int(count)) samples"
                chart.body = .points(try points(type, store, lo, hi, source))
            } else {
                chart.bucket = options.bucket
                options.statistics = [.count, .min, .mean, .max]
                let rows = try store.aggregate(type, from: lo, to: hi, options: options).rows
                chart.body = .band(
                    rows.map {
                        Chart.BandPoint(
                            start: $0.start, end: $0.end, min: $0.values[.min], mean: $0.values[.mean],
                            max: $0.values[.max], count: Int($0.values[.count] ?? 0))
                    })
            }
        case .cumulative:
            chart.bucket = options.bucket
            chart.unit = try unit(of: type, store, lo, hi)
            chart.body = try sumBars(store, type, lo, hi, options, name: name, bySource: bySource && source == nil)
        case .category where type == "HKCategoryTypeIdentifierSleepAnalysis":
            chart.unit = "hours"
            chart.subtitle = subtitle(lo, hi, zone, nil, kind) + " · per night, noon to noon"
            chart.body = try sleepBars(store, lo, hi, options)
        case .category:
            chart.bucket = options.bucket
            chart.unit = "minutes"
            let rows = try store.aggregate(type, from: lo, to: hi, options: options).rows
            chart.body = .bars(
                rows.map { r in
                    let minutes = r.seconds.values.reduce(0, +) / 60
                    return Chart.Bar(
                        start: r.start, end: r.end, segments: [minutes],
                        title: localTimestamp(r.start, zone).prefix(16) + "  " + SVGDocument.number(minutes, digits: 0)
                            + " min")
                }, names: [name])
        case .workout:
            chart.unit = "time of day"
            chart.subtitle = subtitle(lo, hi, zone, nil, kind)
            chart.body = .timeline(
                try store.workouts(from: lo, to: hi).map { w in
                    Chart.Span(
                        start: w.start, end: w.end,
                        title: w.name + ", " + localTimestamp(w.start, zone) + ", "
                            + SVGDocument.number(Double(w.end - w.start) / 60e6, digits: 0) + " min")
                })
        }
        return chart
    }

    /// Bars of the de-duplicated sum per bucket; by source, each source's own sum stacked, with
    /// the de-duplicated total marked (the parts overlap where watch and phone both counted).
    static func sumBars(
        _ store: Store, _ type: String, _ lo: Int64, _ hi: Int64, _ options: AggregateOptions, name: String,
        bySource: Bool
    ) throws(TSDBError) -> Chart.Body {
        var o = options
        o.statistics = [.sum]
        let totals = try store.aggregate(type, from: lo, to: hi, options: o).rows
        let sources = bySource ? try Self.sources(of: type, store, lo, hi) : []
        var perSource: [[Int64: Double]] = []
        for s in sources {
            var one = o
            one.source = s
            one.deduplicate = false
            let rows = try store.aggregate(type, from: lo, to: hi, options: one).rows
            perSource.append(Dictionary(rows.map { ($0.start, $0.values[.sum] ?? 0) }, uniquingKeysWith: +))
        }
        let bars = totals.map { r in
            let total = r.values[.sum] ?? 0
            let title = localTimestamp(r.start, options.zone).prefix(16) + "  " + SVGDocument.number(total, digits: 1)
            guard bySource, sources.count > 1 else {
                return Chart.Bar(start: r.start, end: r.end, segments: [total], title: String(title))
            }
            let parts = perSource.map { $0[r.start] ?? 0 }
            let detail = zip(sources, parts).map { "\n\($0): \(SVGDocument.number($1, digits: 1))" }.joined()
            return Chart.Bar(
                start: r.start, end: r.end, segments: parts, title: title + " counted once" + detail, total: total)
        }
        return .bars(bars, names: bySource && sources.count > 1 ? sources : [name])
    }

    /// The distinct sources of a type's samples in `[lo, hi)`, from the segments' dictionaries.
    public static func sources(of type: String, _ store: Store, _ lo: Int64, _ hi: Int64) throws(TSDBError)
        -> [String]
    {
        var names: Set<String> = []
        for segment in try store.segments(of: type, from: lo, to: hi) {
            for s in segment.sources { if let text = s.string { names.insert(text) } }
        }
        return names.sorted()
    }

    /// Buckets that give a readable number of them for the span.
    static func autoBucket(span: Int64, kind: TypeCatalog.Kind) -> BucketSpec {
        let days = Double(span) / 86_400e6
        if days <= 2 { return kind == .cumulative ? .calendar(.hour) : .fixed(seconds: 900) }
        if days <= 14 { return kind == .cumulative ? .calendar(.day) : .calendar(.hour) }
        if days <= 400 { return .calendar(.day) }
        if days <= 5 * 366 { return .calendar(.week) }
        return .calendar(.month)
    }

    static func countOnly(_ options: AggregateOptions) -> AggregateOptions {
        var o = options
        o.bucket = .none
        o.statistics = [.count]
        return o
    }

    static func subtitle(
        _ lo: Int64, _ hi: Int64, _ zone: TimeZoneRules, _ bucket: BucketSpec?, _ kind: TypeCatalog.Kind
    )
        -> String
    {
        let span = localTimestamp(lo, zone).prefix(10) + " – " + localTimestamp(hi - 1, zone).prefix(10)
        let per = bucket.map { " · per \($0)" } ?? ""
        let how = kind == .cumulative ? " · sum" : ""
        return span + per + how + " · " + zone.identifier
    }

    static func unit(of type: String, _ store: Store, _ lo: Int64, _ hi: Int64) throws(TSDBError) -> String {
        var cursor = try store.samples(of: type, from: lo, to: hi)
        return try cursor.next()?.unit.string ?? ""
    }

    static func points(_ type: String, _ store: Store, _ lo: Int64, _ hi: Int64, _ source: String?)
        throws(TSDBError) -> [Chart.Point]
    {
        var out: [Chart.Point] = []
        var cursor = try store.samples(of: type, from: lo, to: hi, source: source)
        while let s = try cursor.next() {
            if let v = s.value.doubleValue { out.append(Chart.Point(instant: s.start.microseconds, value: v)) }
        }
        return out
    }

    /// Sleep values stacked bottom-up: deep, core, REM, unspecified, awake (HealthKit's values).
    public static let sleepStages: [(value: Int64, name: String)] = [
        (4, "deep"), (3, "core"), (5, "REM"), (1, "asleep"), (2, "awake"),
    ]

    static func sleepBars(_ store: Store, _ lo: Int64, _ hi: Int64, _ options: AggregateOptions) throws(TSDBError)
        -> Chart.Body
    {
        let nights = try store.sleepNights(from: lo, to: hi, options: options)
        let bars = nights.map { n in
            let zone = options.zone
            let title =
                "night to \(n.date): bed " + localTimestamp(n.bedtime, zone).dropFirst(11).prefix(5) + ", up "
                + localTimestamp(n.wakeTime, zone).dropFirst(11).prefix(5) + ", asleep "
                + SVGDocument.number(n.asleepSeconds / 3600, digits: 1) + " h"
            // A night's bar spans the local day it is named after (its wake-up date).
            let parts = n.date.split(separator: "-").compactMap { Int($0) }
            let day = parts.count == 3 ? daysSinceEpoch(parts[0], parts[1], parts[2]) : 0
            return Chart.Bar(
                start: zone.startOfDay(day), end: zone.startOfDay(day + 1),
                segments: sleepStages.map { (n.secondsByValue[$0.value] ?? 0) / 3600 }, title: title)
        }
        return .bars(bars, names: sleepStages.map(\.name))
    }
}
