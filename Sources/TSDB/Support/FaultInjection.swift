#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if TSDB_TESTING
    /// Makes chosen file operations fail, to prove that a failure at any step leaves a consistent
    /// store (leveldb's fault-injecting Env, in miniature). Inactive unless a test installs a rule;
    /// a rule applies only to paths under its folder, so tests running in parallel are unaffected.
    public enum FaultInjection {
        public enum Operation: String, Sendable {
            case create, write, fsync, rename
        }

        public struct Rule: Sendable {
            public var folder: String
            public var operation: Operation
            /// Fail the n-th matching operation (0 = the first), and every one after it.
            public var failFrom: Int
            public var errno: Int32

            public init(folder: String, operation: Operation, failFrom: Int, errno: Int32) {
                self.folder = folder
                self.operation = operation
                self.failFrom = failFrom
                self.errno = errno
            }
        }

        private final class State: @unchecked Sendable {
            var mutex = pthread_mutex_t()
            var rules: [(rule: Rule, seen: Int)] = []
            init() { pthread_mutex_init(&mutex, nil) }
        }

        private static let state = State()
        nonisolated(unsafe) private static var active = false

        public static func install(_ rule: Rule) {
            pthread_mutex_lock(&state.mutex)
            state.rules.append((rule, 0))
            active = true
            pthread_mutex_unlock(&state.mutex)
        }

        public static func remove(folder: String) {
            pthread_mutex_lock(&state.mutex)
            state.rules.removeAll { $0.rule.folder == folder }
            active = !state.rules.isEmpty
            pthread_mutex_unlock(&state.mutex)
        }

        /// The errno to fail `operation` on `path` with, if a rule says so.
        static func check(_ operation: Operation, _ path: String) -> Int32? {
            guard active else { return nil }
            pthread_mutex_lock(&state.mutex)
            defer { pthread_mutex_unlock(&state.mutex) }
            for i in state.rules.indices
            where state.rules[i].rule.operation == operation && path.hasPrefix(state.rules[i].rule.folder) {
                state.rules[i].seen += 1
                if state.rules[i].seen > state.rules[i].rule.failFrom { return state.rules[i].rule.errno }
            }
            return nil
        }

        /// Throws the injected failure for `operation` on `path`, if any.
        static func fail(_ operation: Operation, _ path: String) throws(TSDBError) {
            if let code = check(operation, path) {
                throw TSDBError.io(
                    "cannot \(operation.rawValue) file: \(String(cString: strerror(code))) (injected)", path: path,
                    errno: code)
            }
        }
    }
#else
    /// Release builds: no fault injection; the calls compile to nothing.
    enum FaultInjection {
        enum Operation { case create, write, fsync, rename }

        @inline(__always) static func fail(_ operation: Operation, _ path: String) throws(TSDBError) {}
    }
#endif
