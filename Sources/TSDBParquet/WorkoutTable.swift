import TSDB

/// The `workouts` table (Formats/parquet-v1.md §6.2): one row per workout with the details the
/// day files keep in metadata as typed columns, so engines need no JSON functions.
enum WorkoutTable {
    static let identifier = "HKWorkoutTypeIdentifier"

    static let schema: [ColumnSchema] = [
        ColumnSchema(name: "start", physicalType: .int64, logicalType: .timestampMicrosUTC, isOptional: false),
        ColumnSchema(name: "end", physicalType: .int64, logicalType: .timestampMicrosUTC, isOptional: false),
        ColumnSchema(name: "utc_offset_minutes", physicalType: .int32, logicalType: nil, isOptional: false),
        ColumnSchema(name: "end_utc_offset_minutes", physicalType: .int32, logicalType: nil, isOptional: false),
        ColumnSchema(name: "activity_type", physicalType: .int64, logicalType: nil, isOptional: true),
        ColumnSchema(name: "activity_name", physicalType: .byteArray, logicalType: .string, isOptional: false),
        ColumnSchema(name: "duration_seconds", physicalType: .double, logicalType: nil, isOptional: false),
        ColumnSchema(name: "total_distance", physicalType: .double, logicalType: nil, isOptional: true),
        ColumnSchema(name: "total_distance_unit", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "total_energy_burned", physicalType: .double, logicalType: nil, isOptional: true),
        ColumnSchema(
            name: "total_energy_burned_unit", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "source", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "device", physicalType: .byteArray, logicalType: .string, isOptional: true),
        ColumnSchema(name: "metadata", physicalType: .byteArray, logicalType: .json, isOptional: true),
    ]

    /// Writes the workouts in `samples` (one month's: few rows, one row group); returns how many.
    static func write(_ samples: [Sample], catalog: TypeCatalog, into file: ParquetFileWriter) throws(TSDBError) -> Int
    {
        let s = schema
        let workouts = samples.map { WorkoutSummary($0, catalog: catalog) }
        func text(_ t: String?) -> ColumnValue? { t.map { .bytes(Array($0.utf8)) } }
        func number(_ d: Double?) -> ColumnValue? { d.map(ColumnValue.double) }
        let columns: [EncodedColumn] = [
            .delta(s[0], samples.map(\.start.microseconds)),
            .delta(s[1], samples.map(\.end.microseconds)),
            .delta(s[2], samples.map { Int64($0.start.form.offsetMinutes) }),
            .delta(s[3], samples.map { Int64($0.end.form.offsetMinutes) }),
            .plain(s[4], workouts.map { $0.activity.map(ColumnValue.int64) }),
            .plain(s[5], workouts.map { text($0.name) }),
            .plain(s[6], samples.map { .double(Double($0.durationMicroseconds) / 1e6) }),
            .plain(s[7], workouts.map { number($0.distance) }),
            .plain(s[8], workouts.map { text($0.distanceUnit) }),
            .plain(s[9], workouts.map { number($0.energy) }),
            .plain(s[10], workouts.map { text($0.energyUnit) }),
            .plain(s[11], samples.map { text($0.source.string) }),
            .plain(s[12], samples.map { text($0.device.string) }),
            .plain(s[13], samples.map { text($0.metadata.string) }),
        ]
        try file.write(rowGroup: columns, rowCount: samples.count)
        return samples.count
    }
}
