import Hummingbird
import NIOCore
import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The dashboard server: a read-only view of one store over HTTP (Hummingbird 2).
public struct DashboardServer: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public let layout: StoreLayout
    public let zone: TimeZoneRules

    public init(layout: StoreLayout, zone: TimeZoneRules) {
        self.layout = layout
        self.zone = zone
    }

    /// Serves until the process is stopped; `started` gets the address once it listens.
    public func run(started: @escaping @Sendable (String) -> Void) async throws {
        let stores = StoreCache(layout: layout)
        let api = API(zone: zone) { try stores.current() }
        let router = Router()
        let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            api.respond(to: request, store: try? stores.current())
        }
        router.get("/", use: handler)
        router.get("**", use: handler)
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "tsdb"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? port
                started("http://\(host.contains(":") ? "[\(host)]" : host):\(port)/")
            })
        try await app.runService()
    }
}

extension API {
    func respond(to request: Request, store: Store?) -> Response {
        let answer = get(request.uri.path, query: request.uri.query ?? "")
        var headers: HTTPFields = [.contentType: answer.contentType, .cacheControl: "no-store"]
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        for (name, value) in answer.headers { headers[.init(name)!] = value }  // names are our own constants
        let status = HTTPResponse.Status(code: answer.status)
        if case .bytes(let b) = answer.body {
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: b)))
        }
        guard let store else { return Response(status: .internalServerError, headers: headers) }
        // Streamed: one month's samples in memory at a time.
        let pieces = answer.chunks(store)
        return Response(
            status: status, headers: headers,
            body: ResponseBody { writer in
                for piece in pieces {
                    let bytes = try piece()
                    if !bytes.isEmpty { try await writer.write(ByteBuffer(bytes: bytes)) }
                }
                try await writer.finish(nil)
            })
    }
}

/// The store as of the newest manifest: reopened when a compaction publishes a new generation,
/// so the next request sees it. Never takes the compaction lock.
final class StoreCache: Sendable {
    let layout: StoreLayout
    private let state = Locked<(store: Store?, stamp: [Int64])>((nil, []))

    init(layout: StoreLayout) { self.layout = layout }

    func current() throws -> Store {
        var st = stat()
        let stamp: [Int64] =
            stat(layout.manifestPath, &st) == 0
            ? [Int64(st.st_ino), Int64(st.st_size), Int64(st.st_mtim.tv_sec), Int64(st.st_mtim.tv_nsec)] : []
        return try state.withLock { (s) throws(TSDBError) -> Store in
            if let store = s.store, s.stamp == stamp { return store }
            let store = try Store(layout: layout)
            s = (store, stamp)
            return store
        }
    }
}
