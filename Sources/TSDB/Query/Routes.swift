/// One point of a workout's route: the GPX track point as Health exported it, digits as written.
public struct RoutePoint: Sendable, Equatable {
    public var time: Timestamp
    public var latitude: String
    public var longitude: String
    /// Elevation (m), speed (m/s), course (degrees), horizontal and vertical accuracy (m).
    public var elevation: String?
    public var speed: String?
    public var course: String?
    public var horizontalAccuracy: String?
    public var verticalAccuracy: String?
}

extension Store {
    /// The type route points are stored as (one sample per point, fields in its metadata).
    public static let routeType = "HKWorkoutRouteTypeIdentifier"

    /// The route of `workout`: the points of the route files it names, or, for a workout that names
    /// none, every point recorded during it, in time order.
    public func route(of workout: WorkoutSummary) throws(TSDBError) -> [RoutePoint] {
        guard types.contains(where: { $0.type == Self.routeType }) else { return [] }
        var cursor = try samples(of: Self.routeType, from: workout.start, to: workout.end + 1)
        var points: [RoutePoint] = []
        while let s = try cursor.next() {
            guard case .text(var text) = s.metadata,
                let meta = text.withUTF8({ try? JSONValue.parse(UnsafeRawBufferPointer($0)) })
            else { continue }
            if !workout.routeFiles.isEmpty, !workout.routeFiles.contains(meta["file"]?.string ?? "") { continue }
            func field(_ key: String) -> String? {
                switch meta[key] {
                case .number(let n)?: n
                case .string(let t)?: t
                default: nil
                }
            }
            guard let lat = field("lat"), let lon = field("lon") else { continue }
            points.append(
                RoutePoint(
                    time: s.start, latitude: lat, longitude: lon, elevation: field("ele"), speed: field("speed"),
                    course: field("course"), horizontalAccuracy: field("hAcc"), verticalAccuracy: field("vAcc")))
        }
        return points
    }
}
