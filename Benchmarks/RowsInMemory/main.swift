// tsdb-rows: the library's side of "in memory" for Benchmarks/compare/ranges.py. DuckDB's in-memory
// figure is its answer as an Arrow table (columns of numbers, no text); this asks the TSDB library
// the same question as an app holding the store open would: `Store.aggregateColumns`, the rows as
// columns, no text. The store is opened once, untimed (as by `tsdb query --timings`); each run's
// time is printed, then the answer's size and column sums so the runner can check it. With `reuse`,
// each run fills the previous run's columns again (`aggregateColumns(...into:)`, as an app
// redrawing a chart would); without, each answer is made afresh after the last one is freed.
//
//     tsdb-rows STORE TYPE BUCKET ZONE STATS FROM_US TO_US RUNS [reuse]
import Dispatch
import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func fail(_ message: String) -> Never {
    let line = Array("tsdb-rows: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 9 || (arguments.count == 10 && arguments[9] == "reuse"), let from = Int64(arguments[6]),
    let to = Int64(arguments[7]),
    let runs = Int(arguments[8]), runs > 0
else { fail("usage: tsdb-rows STORE TYPE BUCKET ZONE STATS FROM_US TO_US RUNS [reuse]") }
let reuse = arguments.count == 10
var options = AggregateOptions()
let store: Store
do {
    options.bucket = try BucketSpec.parse(arguments[3])
    options.zone = try TimeZoneRules.named(arguments[4])
    options.statistics = try Statistic.parseList(arguments[5])
    store = try Store(layout: StoreLayout.locate(arguments[1]))
} catch { fail("\(error)") }
guard store.typeNames.contains(arguments[2]) else { fail("no \(arguments[2]) in \(arguments[1])") }

var times: [Double] = []
var answer = AggregateColumns()
for _ in 0..<runs {
    if !reuse { answer = AggregateColumns() }  // Freed before the next run, as an app replacing its answer would.
    let start = DispatchTime.now().uptimeNanoseconds
    do {
        if reuse {
            try store.aggregateColumns(arguments[2], from: from, to: to, options: options, into: &answer)
        } else {
            answer = try store.aggregateColumns(arguments[2], from: from, to: to, options: options)
        }
    } catch { fail("\(error)") }
    times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
}
/// Each statistic's column added up (NaN counted as nothing). A function, not top-level code: the
/// closure of a top-level reduce checks for the main actor at each element.
func sums(_ columns: AggregateColumns) -> [Double] {
    columns.values.map { column in column.reduce(0) { $0 + ($1.isNaN ? 0 : $1) } }
}

// One line for the runner: each run's milliseconds, the number of rows, and each column's sum.
print(
    "{\"ms\": [\(times.map { "\($0)" }.joined(separator: ", "))], \"rows\": \(answer.count), "
        + "\"sums\": [\(sums(answer).map { "\($0)" }.joined(separator: ", "))]}")
