import TSDB
import TSDBCharts

/// The API's answers, each built from the engine's own computations.
enum Endpoints {
    static func types(_ r: APIRequest) throws -> JSONText {
        let zone = try r.zone()
        return .array(
            r.store.types.map { t in
                .object([
                    ("type", .string(t.type)), ("name", .string(TypeNames.shortName(t.type))),
                    ("kind", .string(r.store.catalog.kind(of: t.type).rawValue)), ("samples", .integer(t.sampleCount)),
                    ("first", .string(localTimestamp(t.firstStart, zone))),
                    ("last", .string(localTimestamp(t.lastStart, zone))),
                    ("firstMicros", .integer(Int(t.firstStart))), ("lastMicros", .integer(Int(t.lastStart))),
                ])
            })
    }

    /// The first and last day file's date and the days missing between them.
    static func days(_ r: APIRequest) -> JSONText {
        let names = r.store.manifest.dayFiles.compactMap { e -> String? in
            let name = String(e.path.split(separator: "/").last?.prefix(10) ?? "")
            return name.count == 10 ? name : nil
        }.sorted()
        return .object([
            ("first", .optional(names.first)), ("last", .optional(names.last)), ("days", .integer(names.count)),
            ("missing", .array(r.store.missingDays.map { .array([.string($0.lowerBound), .string($0.upperBound)]) })),
        ])
    }

    /// `tsdb query TYPE --bucket … --format json`, row for row.
    static func aggregate(_ r: APIRequest) throws -> JSONText {
        let type = try r.type()
        let zone = try r.zone()
        let range = try r.range(zone)
        let options = try r.aggregateOptions(zone)
        let result = try r.store.aggregate(type, from: range.from, to: range.to, options: options)
        return .object([
            ("type", .string(type)), ("kind", .string(result.kind.rawValue)),
            ("bucket", .string(options.bucket.description)), ("tz", .string(zone.identifier)),
            ("rows", .array(result.rows.map { row(result, $0, zone, r.store.catalog) })),
        ])
    }

    static func row(_ result: AggregateResult, _ row: AggregateRow, _ zone: TimeZoneRules, _ catalog: TypeCatalog)
        -> JSONText
    {
        var fields: [(String, JSONText)] = [
            ("start", .string(localTimestamp(row.start, zone))), ("end", .string(localTimestamp(row.end, zone))),
        ]
        if result.kind == .category && result.statistics.isEmpty {
            for v in result.categoryValues {
                fields.append((catalog.categoryName(result.type, v) + "_min", .number((row.seconds[v] ?? 0) / 60)))
            }
        } else {
            for s in result.statistics { fields.append((s.rawValue, .optional(row.values[s]))) }
        }
        return .object(fields)
    }

    /// Statistics of the visible range, overall and per source.
    static func statistics(_ r: APIRequest) throws -> JSONText {
        let type = try r.type()
        let zone = try r.zone()
        let range = try r.range(zone)
        var options = try r.aggregateOptions(zone)
        options.bucket = .none
        let kind = r.store.catalog.kind(of: type)
        options.statistics =
            options.statistics
            ?? (kind == .cumulative
                ? [.count, .sum]
                : kind == .discrete
                    ? [.count, .min, .mean, .max, .p50, .p95] : [.count])
        let total = try r.store.aggregate(type, from: range.from, to: range.to, options: options)
        var perSource: [JSONText] = []
        for source in try ChartBuilder.sources(of: type, r.store, range.from ?? .min, range.to ?? .max) {
            var o = options
            o.source = source
            o.deduplicate = false
            let one = try r.store.aggregate(type, from: range.from, to: range.to, options: o)
            guard let row = one.rows.first else { continue }
            perSource.append(
                .object([("source", .string(source))] + one.statistics.map { ($0.rawValue, .optional(row.values[$0])) })
            )
        }
        return .object([
            ("type", .string(type)),
            ("total", total.rows.first.map { row(total, $0, zone, r.store.catalog) } ?? .null),
            ("sources", .array(perSource)),
        ])
    }

    static func sleep(_ r: APIRequest) throws -> JSONText {
        let zone = try r.zone()
        let range = try r.range(zone)
        var options = AggregateOptions()
        options.zone = zone
        let nights = try r.store.sleepNights(from: range.from, to: range.to, options: options)
        return .array(
            nights.map { n in
                .object([
                    ("date", .string(n.date)), ("bedtime", .string(localTimestamp(n.bedtime, zone))),
                    ("wake", .string(localTimestamp(n.wakeTime, zone))), ("inBedMinutes", .number(n.inBedSeconds / 60)),
                    ("asleepMinutes", .number(n.asleepSeconds / 60)),
                    (
                        "stages",
                        .object(
                            ChartBuilder.sleepStages.map { ($0.name, .number((n.secondsByValue[$0.value] ?? 0) / 60)) })
                    ),
                ])
            })
    }

    static func workouts(_ r: APIRequest) throws -> JSONText {
        let zone = try r.zone()
        let range = try r.range(zone)
        let hr = r.store.types.contains { $0.type == "HKQuantityTypeIdentifierHeartRate" }
        let list = try r.store.workouts(
            from: range.from ?? .min, to: range.to ?? .max, with: hr ? "HKQuantityTypeIdentifierHeartRate" : nil)
        return .array(
            list.map { w in
                .object([
                    ("start", .string(localTimestamp(w.start, zone))), ("end", .string(localTimestamp(w.end, zone))),
                    ("startMicros", .integer(Int(w.start))), ("endMicros", .integer(Int(w.end))),
                    ("activity", .string(w.name)), ("minutes", .number(Double(w.end - w.start) / 60e6)),
                    ("distance", .optional(w.distance)), ("distanceUnit", .optional(w.distanceUnit)),
                    ("energy", .optional(w.energy)), ("energyUnit", .optional(w.energyUnit)),
                    (
                        "heartRate",
                        w.with.map {
                            .object([
                                ("count", .integer($0.count)), ("min", .optional($0.min)),
                                ("mean", .optional($0.mean)), ("max", .optional($0.max)),
                            ])
                        } ?? .null
                    ),
                ])
            })
    }

    /// A page of raw samples as JSON, or the whole range as CSV/NDJSON (a download).
    static func samples(_ r: APIRequest) throws -> APIResponse {
        let type = try r.type()
        let zone = try r.zone()
        let range = try r.range(zone)
        let format = r.string("format") ?? "json"
        switch format {
        case "csv", "ndjson":
            var response = APIResponse(
                status: 200, contentType: format == "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson",
                body: .samples(
                    type: type, from: range.from ?? .min, to: range.to ?? .max,
                    format: format == "csv" ? .csv : .ndjson, source: r.string("source")))
            let name = TypeNames.shortName(type) + "." + format
            response.headers.append(("Content-Disposition", "attachment; filename=\"\(name)\""))
            return response
        case "json":
            let offset = try r.integer("offset", default: 0, in: 0...Int(Int32.max))
            let limit = try r.integer("limit", default: 100, in: 1...1000)
            var cursor = try r.store.samples(
                of: type, from: range.from ?? .min, to: range.to ?? .max,
                source: r.string("source"))
            var rows: [JSONText] = []
            var skipped = 0
            var more = false
            while let s = try cursor.next() {
                if skipped < offset {
                    skipped += 1
                    continue
                }
                if rows.count == limit {
                    more = true
                    break
                }
                rows.append(
                    .object([
                        ("start", .string(localTimestamp(s.start.microseconds, zone))),
                        ("end", .string(localTimestamp(s.end.microseconds, zone))),
                        ("value", .string(r.store.catalog.describeValue(of: s))), ("unit", .optional(s.unit.string)),
                        ("source", .optional(s.source.string)), ("device", .optional(s.device.string)),
                        ("metadata", .optional(s.metadata.string)),
                    ]))
            }
            return .json(.object([("offset", .integer(offset)), ("more", .bool(more)), ("rows", .array(rows))]))
        default:
            throw APIError.bad("format", "expected json, csv or ndjson, found \"\(format)\"")
        }
    }

    /// The type's chart from the same renderer as `tsdb plot`; `X-TSDB-Bucket` says which bucket
    /// size the zoom level got.
    static func chart(_ r: APIRequest) throws -> APIResponse {
        let type = try r.type()
        let zone = try r.zone()
        let range = try r.range(zone)
        var chart = try ChartBuilder.chart(
            r.store, type: type, from: range.from, to: range.to, bucket: try r.bucket(), zone: zone,
            source: r.string("source"))
        chart.width = Double(try r.integer("width", default: 960, in: 200...4000))
        chart.height = Double(try r.integer("height", default: 400, in: 120...4000))
        if let theme = r.string("theme") {
            guard let t = Chart.Theme(rawValue: theme) else {
                throw APIError.bad("theme", "expected auto, light or dark")
            }
            chart.theme = t
        }
        var response = APIResponse(
            status: 200, contentType: "image/svg+xml; charset=utf-8", body: .bytes(Array(chart.svg().utf8)))
        response.headers.append(("X-TSDB-Bucket", chart.bucketDescription))
        response.headers.append(("X-TSDB-Range", "\(chart.from)..\(chart.to)"))
        return response
    }
}
