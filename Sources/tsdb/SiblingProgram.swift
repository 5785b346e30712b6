import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The programs installed beside `tsdb` that some commands hand work to: `tsdb-serve` (the
/// dashboard's HTTP stack, which other commands never load) and `tsdb-png` (librsvg, which a fully
/// static `tsdb` cannot load).
enum SiblingProgram {
    /// The path of `name` in the folder of the running `tsdb`.
    static func path(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let me =
            n > 0
            ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        return FileSystem.parentDirectory(me) + "/" + name
    }

    /// Runs `name` (beside `tsdb`) with `arguments`, `input` on its standard input, and gives its
    /// standard output; its standard error is ours. Throws when it is missing or fails.
    static func filter(_ name: String, _ arguments: [String], input: [UInt8]) throws(TSDBError) -> [UInt8] {
        let program = path(name)
        guard FileSystem.exists(program) else {
            throw TSDBError.notFound(
                "\(name) is missing: build it with `swift build -c release` (it is built with tsdb)", path: program)
        }
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0 else { throw failure("cannot make a pipe to it", program) }
        defer { for fd in toChild where fd >= 0 { close(fd) } }
        guard pipe(&fromChild) == 0 else { throw failure("cannot make a pipe from it", program) }
        defer { for fd in fromChild where fd >= 0 { close(fd) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else { throw failure("cannot run it", program, errno: spawned) }
        close(toChild[0])
        close(fromChild[1])
        (toChild[0], fromChild[1]) = (-1, -1)
        // The child reads all of its input before it writes: no deadlock however large either is.
        let wrote = Result { () throws(TSDBError) in try FileSystem.writeAll(toChild[1], input, path: program) }
        close(toChild[1])
        toChild[1] = -1
        let output = readAll(fromChild[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        guard exited && (status >> 8) & 0xff == 0 else {
            let how = exited ? "exit status \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
            throw TSDBError.io("it failed (\(how)); its message, if any, is above", path: program)
        }
        try wrote.get()
        return output
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return out }
            out += chunk[..<n]
        }
    }

    private static func failure(_ what: String, _ program: String, errno code: Int32 = errno) -> TSDBError {
        TSDBError.io("\(what): \(String(cString: strerror(code)))", path: program, errno: code)
    }
}
