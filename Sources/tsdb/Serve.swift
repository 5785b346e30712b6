import ArgumentParser
import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "A local, read-only dashboard of the store in your browser.",
        discussion:
            "Overview, a zoomable chart per type with its statistics and sources, sleep, workouts and raw "
            + "samples, and a JSON API under /api/ (README: Dashboard). Binds to 127.0.0.1; another --host needs "
            + "--allow-remote. Runs the tsdb-serve program installed beside tsdb.")

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port (0: any free port).")
    var port = 8080

    @Flag(help: "Allow a --host other than loopback (anyone who can reach it can read your data).")
    var allowRemote = false

    @OptionGroup var zoneOption: ZoneOption

    @OptionGroup var storeOption: StoreOption

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0-65535") }
        let loopback = ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.")
        if !loopback && !allowRemote {
            throw ValidationError(
                "--host \(host) would let other machines read your health data; add --allow-remote if you mean it")
        }
    }

    func run() throws {
        let layout = try storeOption.layout()
        _ = try Store(layout: layout)  // a missing or damaged store fails here, with the CLI's advice
        if let tz = zoneOption.tz { _ = try TimeZoneRules.named(tz) }
        let program = SiblingProgram.path("tsdb-serve")
        guard FileSystem.exists(program) else {
            throw ValidationError(
                "\(program) is missing: build it with `swift build -c release` (it is built with tsdb)")
        }
        var arguments = [program, "--store", layout.storeDirectory, "--host", host, "--port", String(port)]
        if let tz = zoneOption.tz { arguments += ["--tz", tz] }
        StandardOutput.flush()
        let argv = arguments.map { strdup($0) } + [nil]
        execv(program, argv)
        throw ValidationError("cannot run \(program): \(String(cString: strerror(errno)))")
    }

}
