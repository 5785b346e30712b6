import Foundation
import XCTest

/// The dashboard in a real browser: headless Chromium (Debian's `chromium`, installed by
/// `.ci/setup test`) loads every page of a generated store's dashboard and the test reads the DOM
/// the page's script built. Screenshots go to `.build/dashboard-screenshots/` (CI keeps them).
final class DashboardBrowserTests: XCTestCase {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../.build/dashboard-screenshots").standardized.path

    struct Page {
        var dom: String
        var console: [String]
        func attribute(_ name: String) -> String? {
            guard let r = dom.range(of: name + "=\"") else { return nil }
            return String(dom[r.upperBound...].prefix { $0 != "\"" })
        }
        func count(_ needle: String) -> Int { dom.components(separatedBy: needle).count - 1 }
    }

    func load(_ url: String, screenshot: String? = nil) throws -> Page {
        let browser = try XCTUnwrap(Self.chromium, "chromium is not installed (.ci/setup test installs it)")
        let flags = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=15000", "--window-size=1280,900",
        ]
        let r = try runProcess(browser, flags + ["--dump-dom", url])
        if let screenshot {
            try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
            _ = try runProcess(browser, flags + ["--screenshot=\(Self.screenshots)/\(screenshot).png", url])
        }
        let console = r.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
        return Page(dom: r.stdout, console: console)
    }

    func testEveryPageDrawsItsDataWithoutConsoleErrors() throws {
        let store = try generatedStore("browser", days: 20, start: "2025-03-01")
        defer { store.cleanup() }
        let (address, server) = try startDashboard(store.path)
        defer { server.terminate() }

        let overview = try load(address + "#/", screenshot: "overview")
        XCTAssertEqual(overview.attribute("data-ready"), "#/", overview.dom)
        XCTAssertGreaterThan(overview.count("href=\"#/type/"), 5)
        XCTAssertGreaterThanOrEqual(overview.count("<span title=\"2025-03-"), 20, "the calendar has a square a day")

        let workouts = try load(address + "#/workouts", screenshot: "workouts")
        XCTAssertEqual(workouts.attribute("data-ready"), "#/workouts")
        let link = try XCTUnwrap(workouts.dom.range(of: "href=\"#/workout/")).upperBound
        let workout = String(workouts.dom[link...].prefix { $0 != "\"" })

        // (page, what its chart must contain)
        let pages: [(String, String)] = [
            ("#/type/HeartRate", "class=\"band\""), ("#/type/StepCount", "class=\"s0\""),
            ("#/sleep", "class=\"s1\""), ("#/workout/" + workout, "class=\"dot\""),
            ("#/samples/HeartRate", "<td>count/min</td>"),
        ]
        for (hash, drawn) in pages {
            let name = hash.dropFirst(2).split(separator: "/").prefix(2).joined(separator: "-")
            let page = try load(address + hash, screenshot: name)
            XCTAssertEqual(page.attribute("data-ready"), hash, "\(hash): \(page.dom.suffix(400))")
            XCTAssertGreaterThan(page.count(drawn), 0, "\(hash) drew no \(drawn)")
            XCTAssertEqual(page.console, [String](), hash)
        }
        XCTAssertEqual(overview.console + workouts.console, [String]())
    }

    func testZoomingInFetchesFinerBuckets() throws {
        let store = try generatedStore("browser-zoom", days: 20, start: "2025-03-01")
        defer { store.cleanup() }
        let (address, server) = try startDashboard(store.path)
        defer { server.terminate() }
        let seconds = [
            "year": 31_536_000, "month": 2_592_000, "week": 604_800, "day": 86_400, "hour": 3600, "15m": 900,
        ]
        func bucket(_ page: Page) -> Int? { page.attribute("data-buckets").flatMap { seconds[$0] ?? 0 } }

        let whole = try load(address + "#/type/HeartRate")
        // What the "+" button and the mouse wheel do: a narrower from/to in the address.
        let from = 1_741_305_600_000_000  // 2025-03-07T00:00Z
        let zoomed = try load(address + "#/type/HeartRate?from=\(from)&to=\(from + 3 * 86_400_000_000)")
        let closer = try load(address + "#/type/HeartRate?from=\(from)&to=\(from + 7_200_000_000)")
        let (a, b, c) = (try XCTUnwrap(bucket(whole)), try XCTUnwrap(bucket(zoomed)), try XCTUnwrap(bucket(closer)))
        XCTAssertGreaterThan(a, b, "three days are drawn finer than twenty")
        XCTAssertGreaterThan(b, c, "two hours are drawn finer than three days")
        XCTAssertEqual(closer.attribute("data-buckets"), "samples")
        XCTAssertGreaterThan(closer.count("class=\"dot\""), 3, "each sample is a dot")
    }
}
