import TSDB
import TSDBCharts

/// A workout's route written back out: GPX 1.1 as Health writes it (Apple's speed, course and
/// accuracies in `<extensions>`), GeoJSON (one LineString feature, RFC 7946: lon, lat, elevation),
/// or CSV. Coordinates keep the digits Health wrote.
enum RouteOutput {
    static func gpx(_ points: [RoutePoint], _ workout: WorkoutSummary, _ out: OutputBuffer) {
        out.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="tsdb" xmlns="http://www.topografix.com/GPX/1/1">
             <trk>
              <name>\(xmlEscaped(workout.name)) \(ISO8601.format(workout.start, .zulu))</name>
              <trkseg>

            """)
        for p in points {
            var line = "   <trkpt lat=\"\(xmlEscaped(p.latitude))\" lon=\"\(xmlEscaped(p.longitude))\">"
            if let e = p.elevation { line += "<ele>\(xmlEscaped(e))</ele>" }
            line += "<time>\(ISO8601.format(p.time.microseconds, p.time.form))</time>"
            let extensions = [
                ("speed", p.speed), ("course", p.course), ("hAcc", p.horizontalAccuracy), ("vAcc", p.verticalAccuracy),
            ].compactMap { k, v in v.map { "<\(k)>\(xmlEscaped($0))</\(k)>" } }
            if !extensions.isEmpty { line += "<extensions>" + extensions.joined() + "</extensions>" }
            out.write(line + "</trkpt>\n")
        }
        out.write("  </trkseg>\n </trk>\n</gpx>\n")
    }

    static func geoJSON(_ points: [RoutePoint], _ workout: WorkoutSummary, _ out: OutputBuffer) {
        func number(_ s: String) -> String { Double(s) != nil ? s : "null" }
        out.write(
            "{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"properties\":{\"workout\":"
                + jsonString(workout.name) + ",\"start\":\"\(ISO8601.format(workout.start, .zulu))\",\"coordTimes\":[")
        for (i, p) in points.enumerated() {
            out.write((i == 0 ? "" : ",") + "\"\(p.time.description)\"")
        }
        out.write("]},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[")
        for (i, p) in points.enumerated() {
            let ele = p.elevation.map { "," + number($0) } ?? ""
            out.write((i == 0 ? "" : ",") + "[\(number(p.longitude)),\(number(p.latitude))\(ele)]")
        }
        out.write("]}}]}\n")
    }

    static func csv(_ points: [RoutePoint], _ out: OutputBuffer) {
        out.write(
            "time,latitude,longitude,elevation_m,speed_m_s,course_deg,horizontal_accuracy_m,vertical_accuracy_m\n")
        for p in points {
            let fields = [
                p.time.description, p.latitude, p.longitude, p.elevation ?? "", p.speed ?? "", p.course ?? "",
                p.horizontalAccuracy ?? "", p.verticalAccuracy ?? "",
            ]
            out.write(fields.map(csvQuoted).joined(separator: ",") + "\n")
        }
    }

    static func xmlEscaped(_ s: String) -> String { XMLEscape.text(s) }
}
