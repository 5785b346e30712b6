import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tsdb-serve`: the program `tsdb serve` runs once it has checked its options (the command line
/// stays free of the HTTP stack). Arguments: `--store DIR --host H --port N --tz ZONE`.
public enum ServeCommand {
    public static func main(_ arguments: [String]) async {
        var options: [String: String] = [:]
        var rest = arguments[...]
        while let name = rest.popFirst() {
            guard name.hasPrefix("--"), let value = rest.popFirst() else {
                fail("usage: tsdb-serve --store DIR [--host 127.0.0.1] [--port 8080] [--tz ZONE] (run `tsdb serve`)")
            }
            options[String(name.dropFirst(2))] = value
        }
        // Hummingbird logs each start at "info"; the address line below says what matters.
        setenv("LOG_LEVEL", "warning", 0)
        do {
            let layout = try StoreLayout.locate(options["store"] ?? ".")
            let zone =
                try options["tz"].map { try TimeZoneRules.named($0) }
                ?? TimeZoneRules.system(environment: getenv("TZ").map { String(cString: $0) }).zone
            var server = DashboardServer(layout: layout, zone: zone)
            server.host = options["host"] ?? server.host
            if let p = options["port"] {
                guard let port = Int(p), (0...65_535).contains(port) else { fail("--port must be 0-65535, not \(p)") }
                server.port = port
            }
            let store = layout.storeDirectory
            try await server.run { address in
                let line = "tsdb dashboard: \(address)  (store \(store); Ctrl-C stops it)\n"
                _ = line.withCString { write(1, $0, strlen($0)) }
            }
        } catch {
            fail("tsdb serve: \(error)")
        }
    }

    static func fail(_ message: String) -> Never {
        let line = message + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(1)
    }
}
