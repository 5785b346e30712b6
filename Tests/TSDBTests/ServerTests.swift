import Foundation
import XCTest

@testable import TSDB
@testable import TSDBServer

/// The dashboard's API in-process, the real server over HTTP, and the page in headless Chromium.
final class ServerTests: XCTestCase {
    func api(_ store: TemporaryFolder, zone: String = "Europe/Paris") throws -> API {
        let layout = try StoreLayout.locate(store.path)
        return API(zone: try TimeZoneRules.named(zone)) { try Store(layout: layout) }
    }

    func json(_ response: APIResponse, _ store: TemporaryFolder) throws -> Any {
        let bytes = try response.collect(try Store(at: store.path))
        return try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }

    func testRoutesAnswerWithStatusTypeAndShape() throws {
        let store = try generatedStore("serve-routes", days: 4)
        defer { store.cleanup() }
        let api = try api(store)
        let page = api.get("/", query: "")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.contentType.hasPrefix("text/html"))
        XCTAssertEqual(api.get("/app.js", query: "").contentType, "text/javascript; charset=utf-8")

        let types = try XCTUnwrap(json(api.get("/api/types", query: ""), store) as? [[String: Any]])
        XCTAssertTrue(types.contains { $0["name"] as? String == "HeartRate" && ($0["samples"] as? Int ?? 0) > 0 })
        let agg = api.get("/api/aggregate", query: "type=HeartRate&range=2025-03-01..2025-03-03&bucket=day")
        XCTAssertEqual(agg.status, 200)
        let rows = try XCTUnwrap((json(agg, store) as? [String: Any])?["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.count, 3)
        XCTAssertEqual(rows.first?["start"] as? String, "2025-03-01T00:00:00+01:00")
        for path in ["/api/stats", "/api/samples"] {
            let r = api.get(path, query: "type=HeartRate&range=2025-03-02")
            XCTAssertEqual(r.status, 200, path)
            XCTAssertTrue(r.contentType.hasPrefix("application/json"), path)
        }
        XCTAssertEqual(api.get("/api/sleep", query: "range=2025-03").status, 200)
        XCTAssertEqual(api.get("/api/workouts", query: "").status, 200)
        let chart = api.get("/api/chart.svg", query: "type=HeartRate&range=2025-03-02")
        XCTAssertEqual(chart.contentType, "image/svg+xml; charset=utf-8")
        XCTAssertTrue(chart.headers.contains { $0 == ("X-TSDB-Bucket", "samples") || $0.0 == "X-TSDB-Bucket" })
        let csv = api.get("/api/samples", query: "type=HeartRate&range=2025-03-02&format=csv")
        let text = String(decoding: try csv.collect(try Store(at: store.path)), as: UTF8.self)
        let cli = try tsdbShell([
            "query", "HeartRate", "--store", store.path, "--range", "2025-03-02", "--tz", "Europe/Paris", "--format",
            "csv",
        ])
        XCTAssertEqual(text, cli.stdout, "the CSV download is the CLI's CSV")
    }

    func testBadParametersAre400sNamingTheParameter() throws {
        let store = try generatedStore("serve-errors", days: 2)
        defer { store.cleanup() }
        let api = try api(store)
        let cases: [(String, String, String)] = [
            ("/api/aggregate", "", "type"), ("/api/aggregate", "type=Nope", "type"),
            ("/api/aggregate", "type=HeartRate&range=2025-13", "range"),
            ("/api/aggregate", "type=HeartRate&bucket=fortnight", "bucket"),
            ("/api/aggregate", "type=HeartRate&tz=Mars/Olympus", "tz"),
            ("/api/aggregate", "type=HeartRate&stats=median", "stats"),
            ("/api/samples", "type=HeartRate&limit=0", "limit"),
            ("/api/samples", "type=HeartRate&format=xml", "format"),
            ("/api/chart.svg", "type=HeartRate&from=yesterday", "from"),
            ("/api/chart.svg", "type=HeartRate&from=10&to=5", "to"),
        ]
        for (path, query, parameter) in cases {
            let r = api.get(path, query: query)
            XCTAssertEqual(r.status, 400, "\(path)?\(query)")
            let body = try XCTUnwrap(json(r, store) as? [String: Any])
            XCTAssertEqual(body["parameter"] as? String, parameter, "\(path)?\(query): \(body)")
            XCTAssertFalse((body["error"] as? String ?? "").isEmpty)
        }
    }

    func testOnlyCompiledInAssetsAreServed() throws {
        let store = try generatedStore("serve-paths", days: 1)
        defer { store.cleanup() }
        let api = try api(store)
        for path in [
            "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/app.js/../../../etc/passwd", "/style.css%00.js",
            "/tsdb/MANIFEST", "/raw/2025/03/2025-03-01.json", "/api", "/api/", "/api/nothing", "//etc/passwd",
        ] {
            let r = api.get(path, query: "")
            XCTAssertEqual(r.status, 404, path)
            XCTAssertFalse(String(decoding: try r.collect(try Store(at: store.path)), as: UTF8.self).contains("root:"))
        }
    }

    func testTheAPIGivesTheCLIsNumbers() throws {
        let store = try generatedStore("serve-same", days: 10)
        defer { store.cleanup() }
        let api = try api(store, zone: "UTC")
        for (type, stats) in [("HeartRate", "count,min,max,mean,p50"), ("StepCount", "sum,count")] {
            let query = "type=\(type)&range=2025-03-01..2025-03-10&bucket=day&tz=Europe/Paris&stats=\(stats)"
            let apiRows = try XCTUnwrap(
                (json(api.get("/api/aggregate", query: query), store) as? [String: Any])?["rows"])
            let cli = try tsdbShell([
                "query", type, "--store", store.path, "--range", "2025-03-01..2025-03-10", "--bucket", "day", "--tz",
                "Europe/Paris", "--stats", stats, "--format", "json",
            ])
            let cliRows = try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8))
            XCTAssertEqual(apiRows as? NSArray, cliRows as? NSArray, type)
            XCTAssertGreaterThan((cliRows as? [Any])?.count ?? 0, 5)
        }
    }

    // MARK: the real server

    func curl(_ arguments: [String]) throws -> CommandLineTests.Run {
        try runProcess("/usr/bin/env", ["curl", "-s", "-S", "--max-time", "20"] + arguments)
    }

    func testTheServerAnswersGETOnlyAndSeesTheNextCompaction() throws {
        let store = try generatedStore("serve-http", days: 3)
        defer { store.cleanup() }
        let (address, server) = try startDashboard(store.path)
        defer { server.terminate() }
        let page = try curl(["-w", "%{http_code} %{content_type}", "-o", "/dev/null", address])
        XCTAssertEqual(page.stdout, "200 text/html; charset=utf-8")
        let post = try curl(["-w", "%{http_code}", "-o", "/dev/null", "-X", "POST", address + "api/types"])
        XCTAssertNotEqual(post.stdout, "200")
        XCTAssertTrue(post.stdout.hasPrefix("4"), post.stdout)

        func heartRates() throws -> Int {
            let r = try curl([address + "api/types"])
            let types = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]
            return types?.first { $0["name"] as? String == "HeartRate" }?["samples"] as? Int ?? -1
        }
        let before = try heartRates()
        try generate(store.path + "/more", days: 1, seed: 8, edgeCases: false, start: "2025-03-04")
        let day = "/raw/2025/03/2025-03-04.json"
        try FileManager.default.copyItem(atPath: store.path + "/more" + day, toPath: store.path + day)
        XCTAssertEqual(try tsdbShell(["compact", store.path]).status, 0)
        XCTAssertGreaterThan(try heartRates(), before, "the next request sees the new generation")
    }

    func testARemoteHostNeedsAllowRemote() throws {
        let store = try generatedStore("serve-remote", days: 1)
        defer { store.cleanup() }
        let r = try tsdbShell(["serve", "--store", store.path, "--host", "0.0.0.0"])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("--allow-remote"), r.stderr)
    }
}

/// Starts `tsdb serve --port 0` and returns its address and process.
func startDashboard(_ store: String, _ extra: [String] = []) throws -> (String, Process) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: CommandLineTests.executable)
    p.arguments = ["serve", "--store", store, "--port", "0", "--tz", "Europe/Paris"] + extra
    let out = Pipe()
    p.standardOutput = out
    p.standardError = Pipe()
    try p.run()
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = out.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line += chunk
    }
    let text = String(decoding: line, as: UTF8.self)
    guard let address = text.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
        p.terminate()
        throw TSDBError.invalidInput("tsdb serve did not print its address: " + text)
    }
    return (String(address), p)
}
