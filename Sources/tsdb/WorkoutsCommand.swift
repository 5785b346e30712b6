import ArgumentParser
import TSDB

struct Workouts: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List workouts: type, start, duration, distance, energy, and optionally another type during each.",
        discussion: """
            With --with, tsdb's own figures from the samples stand beside Apple's (the workout's \
            statistics in Health's export), when the export has them. With --route WORKOUT (the start \
            shown in the list, or a prefix of it such as 2025-03-01T07:57), prints that workout's route \
            as GPX (default), GeoJSON or CSV (--format gpx|geojson|csv).
            """)

    @OptionGroup var report: ReportOptions

    @Option(
        help: """
            Also show another type during each workout: min/mean/max of a discrete type (HeartRate), \
            the sum of a cumulative one (StepCount).
            """
    )
    var with: String?

    @Option(help: "Print the route of the workout starting at this time (as listed) instead of the list.")
    var route: String?

    var request: WorkoutsRequest { WorkoutsRequest(report: report.request, with: with, route: route) }

    func run() throws { try Self.run(request) }

    static func run(_ request: WorkoutsRequest) throws {
        if let route = request.route { return try printRoute(route, request.report) }
        let (store, zone, r, f) = try request.report.resolve()
        let other = try request.with.map { try TypeNames.resolve($0, among: store.typeNames) }
        let list = try store.workouts(from: r.from ?? .min, to: r.to ?? .max, with: other)
        var header = ["workout", "start", "duration_min", "distance", "energy"]
        let cumulative = other.map { store.catalog.kind(of: $0) == .cumulative } ?? false
        let figures = cumulative ? ["sum"] : ["min", "mean", "max"]
        let apple = other.map { o in list.contains { $0.appleStatistic(o) != nil } } ?? false
        if let other {
            header += figures.map { TypeNames.shortName(other) + "_" + $0 }
            if apple { header += figures.map { "apple_" + $0 } }
        }
        let hasRoutes = list.contains { !$0.routeFiles.isEmpty }
        if hasRoutes { header.append("route") }
        let rows = list.map { w -> [String] in
            var row = [
                w.name, localTimestamp(w.start, zone), human(Double(w.end - w.start) / 60e6),
                w.distance.map { human($0) + " " + (w.distanceUnit ?? "") } ?? "",
                w.energy.map { human($0) + " " + (w.energyUnit ?? "") } ?? "",
            ]
            if let stats = w.with {
                row += (cumulative ? [stats.sum] : [stats.min, stats.mean, stats.max]).map { $0.map(human) ?? "" }
            }
            if apple, let other {
                let a = w.appleStatistic(other)
                row += (cumulative ? [a?.sum] : [a?.minimum, a?.average, a?.maximum]).map { $0.map(human) ?? "" }
            }
            if hasRoutes { row.append(w.routeFiles.isEmpty ? "" : "yes") }
            return row
        }
        printRows(header, rows, format: f)
    }

    static func printRoute(_ start: String, _ report: ReportRequest) throws {
        guard ["gpx", "geojson", "csv", "table"].contains(report.format) else {
            throw ValidationError("--format with --route must be gpx, geojson or csv")
        }
        let zone = try ZoneOption.rules(report.tz)
        let store = try StoreOption.open(report.store)
        let range = try ZoneOption.range(report.range, in: zone)
        let all = try store.workouts(from: range.from ?? .min, to: range.to ?? .max)
        let matches = all.filter { localTimestamp($0.start, zone).hasPrefix(start) }
        guard let workout = matches.first else {
            throw ValidationError("no workout starts at \(start) (in \(zone.identifier)); tsdb workouts lists them")
        }
        guard matches.count == 1 else {
            let starts = matches.prefix(5).map { localTimestamp($0.start, zone) }.joined(separator: ", ")
            throw ValidationError("\(matches.count) workouts start at \(start): \(starts)…; give more of the time")
        }
        let points = try store.route(of: workout)
        guard !points.isEmpty else {
            throw ValidationError(
                "the \(workout.name) at \(localTimestamp(workout.start, zone)) has no route in this store "
                    + "(routes come from Health's export.zip: tsdb import)")
        }
        let out = OutputBuffer()
        defer { out.flush() }
        switch report.format {
        case "geojson": RouteOutput.geoJSON(points, workout, out)
        case "csv": RouteOutput.csv(points, out)
        default: RouteOutput.gpx(points, workout, out)
        }
    }
}

/// A `tsdb workouts` as plain values.
struct WorkoutsRequest: Equatable {
    var report = ReportRequest()
    var with: String?
    var route: String?
}
