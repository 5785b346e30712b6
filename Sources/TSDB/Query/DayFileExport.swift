extension Store {
    /// Writes stored samples back as day files, `directory/YYYY/MM/YYYY-MM-DD.json`, grouped by the
    /// local date of each sample's start in its own UTC offset and sorted by start.
    ///
    /// Months are streamed in order, so memory holds about one month of samples. Refuses to write
    /// anywhere inside the raw folder: the raw files are the source of truth and are never written.
    @discardableResult
    public func exportDayFiles(to directory: String, types: [String]? = nil, from: Int64 = .min, to: Int64 = .max)
        throws(TSDBError) -> (files: Int, samples: Int)
    {
        try FileSystem.requireEmptyOrMissing(directory, "export writes day files only into a new or empty folder")
        try FileSystem.makeDirectories(directory)
        if let target = FileSystem.realPath(directory), let raw = FileSystem.realPath(layout.rawDirectory),
            target == raw || target.hasPrefix(raw + "/")
        {
            throw TSDBError.invalidInput(
                "refusing to export into the raw folder \(raw): raw files are never written", path: directory)
        }
        let wanted = Set(types ?? self.types.map(\.type))
        let months = Set(segmentEntries.filter { wanted.contains($0.type) }.map(\.monthIndex)).sorted()
        var byDate: [String: [Sample]] = [:]
        var files = 0
        var samples = 0
        func flush(before date: String?) throws(TSDBError) {
            for d in byDate.keys.sorted() where date == nil || d < date! {
                var list = byDate.removeValue(forKey: d)!
                list.sort { ($0.start.microseconds, $0.type) < ($1.start.microseconds, $1.type) }
                let dir = directory + "/" + String(d.prefix(4)) + "/" + String(d.dropFirst(5).prefix(2))
                try FileSystem.makeDirectories(dir)
                try FileSystem.createNew(DayFileWriter.dayFile(date: d, samples: list), at: dir + "/" + d + ".json")
                files += 1
                samples += list.count
            }
        }
        for m in months {
            let (monthStart, monthEnd) = (m.start, m.next.start)
            for type in wanted.sorted() {
                var cursor = try self.samples(of: type, from: max(from, monthStart), to: min(to, monthEnd))
                while let s = try cursor.next() { byDate[DayFileWriter.localDate(s.start), default: []].append(s) }
            }
            // Later months only hold samples whose local date is at least this month's last day.
            try flush(
                before: DayFileWriter.localDate(Timestamp(microseconds: monthEnd - ISO8601.microsPerDay, form: .zulu)))
        }
        try flush(before: nil)
        return (files, samples)
    }
}
