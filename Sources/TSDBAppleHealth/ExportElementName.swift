/// The elements the sample builder acts on, told apart once per element: testing a name against
/// each in turn (`isNamed`, up to nine times for an element it ignores) was ~190 M instructions of
/// a year's import. The names' lengths differ, so the length picks the one name to compare with.
enum ExportElementName: Equatable {
    case record, workout, correlation, metadataEntry, beatList, beat, activitySummary, exportDate
    /// Any other element (a workout's statistics, a route, `Me`, …).
    case other

    init(_ e: HealthXMLScanner.Element) {
        self =
            switch e.nameRange.count {
            case 6: e.isNamed("Record") ? .record : .other
            case 7: e.isNamed("Workout") ? .workout : .other
            case 10: e.isNamed("ExportDate") ? .exportDate : .other
            case 11: e.isNamed("Correlation") ? .correlation : .other
            case 13: e.isNamed("MetadataEntry") ? .metadataEntry : .other
            case 15: e.isNamed("ActivitySummary") ? .activitySummary : .other
            case 27: e.isNamed("InstantaneousBeatsPerMinute") ? .beat : .other
            case 32: e.isNamed("HeartRateVariabilityMetadataList") ? .beatList : .other
            default: .other
            }
    }
}
