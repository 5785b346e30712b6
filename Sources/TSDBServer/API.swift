import TSDB
import TSDBCharts

/// An answer, before HTTP: what the server sends and what the in-process tests check.
public struct APIResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Samples of a type as CSV or NDJSON, produced a month at a time (memory stays bounded).
        case samples(type: String, from: Int64, to: Int64, format: Store.TextFormat, source: String?)
    }

    public var status: Int
    public var contentType: String
    public var headers: [(String, String)] = []
    public var body: Body

    static func json(_ value: JSONText, status: Int = 200) -> APIResponse {
        var out: [UInt8] = []
        value.write(to: &out)
        return APIResponse(status: status, contentType: "application/json; charset=utf-8", body: .bytes(out))
    }

    /// The body's bytes (streamed bodies collected: for tests).
    public func collect(_ store: Store) throws -> [UInt8] {
        try chunks(store).reduce(into: []) { $0 += try $1() }
    }

    /// The body as pieces computed one at a time: a streamed body is one piece per month.
    public func chunks(_ store: Store) -> [@Sendable () throws -> [UInt8]] {
        switch body {
        case .bytes(let b): return [{ b }]
        case .samples(let type, let from, let to, let format, let source):
            var out: [@Sendable () throws -> [UInt8]] = []
            if format == .csv { out.append { Array(DayFileWriter.csvHeader.utf8) } }
            let info = store.types.first { $0.type == type }
            var month = MonthIndex.containing(max(from, info?.firstStart ?? from)).month
            let end = min(to, (info?.lastStart ?? from) + 1)
            while month.start < end {
                let (lo, hi) = (max(from, month.start), min(end, month.next.start))
                out.append {
                    var bytes: [UInt8] = []
                    try store.writeSamples(of: type, from: lo, to: hi, format: format, source: source) { bytes += $0 }
                    return bytes
                }
                month = month.next
            }
            return out
        }
    }
}

/// The dashboard's routes: static assets compiled into the binary and a read-only JSON API that
/// answers with the same computations as the command line (README: "Dashboard").
public struct API: Sendable {
    public let store: @Sendable () throws -> Store
    public let zone: TimeZoneRules

    public init(zone: TimeZoneRules, store: @escaping @Sendable () throws -> Store) {
        self.zone = zone
        self.store = store
    }

    /// Answers `GET path?query`. Never throws: failures are JSON errors with a status.
    public func get(_ path: String, query: String) -> APIResponse {
        if let asset = Assets.files[path == "/" ? "/index.html" : path] {
            return APIResponse(status: 200, contentType: asset.contentType, body: .bytes(Array(asset.text.utf8)))
        }
        guard path.hasPrefix("/api/") else {
            return .json(APIError(status: 404, message: "no such page: \(path)").json, status: 404)
        }
        do {
            let request = APIRequest(path: path, parameters: parseQuery(query), store: try store(), defaultZone: zone)
            return try route(request)
        } catch let error as APIError {
            return .json(error.json, status: error.status)
        } catch let error as TSDBError {
            return .json(
                APIError(status: error.kind == .notFound ? 404 : 500, message: error.description).json,
                status: error.kind == .notFound ? 404 : 500)
        } catch {
            return .json(APIError(status: 500, message: "\(error)").json, status: 500)
        }
    }

    func route(_ r: APIRequest) throws -> APIResponse {
        switch r.path {
        case "/api/types": return .json(try Endpoints.types(r))
        case "/api/days": return .json(Endpoints.days(r))
        case "/api/aggregate": return .json(try Endpoints.aggregate(r))
        case "/api/stats": return .json(try Endpoints.statistics(r))
        case "/api/sleep": return .json(try Endpoints.sleep(r))
        case "/api/workouts": return .json(try Endpoints.workouts(r))
        case "/api/samples": return try Endpoints.samples(r)
        case "/api/chart.svg": return try Endpoints.chart(r)
        default: throw APIError(status: 404, message: "no such API: \(r.path)")
        }
    }
}
