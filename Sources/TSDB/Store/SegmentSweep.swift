/// What a compaction does with `segments/` before anything else (manifest-v4 §1): one listing, in
/// which the files the published generation names are checked against the manifest, and every
/// other file is deleted — files of earlier runs that hold no published segment, temporaries and
/// files of crashed runs, and the files and per-type folders of version 3 stores. What a crashed
/// run left (temporaries, generations after the published one) goes before the check is made, so
/// nothing this run writes can be deleted under the same name.
///
/// Deleting when a compaction starts rather than after it publishes takes the deletions and a
/// second listing off the end of a small compaction. The listing and check run on the compacting
/// thread while the other thread lists day files (the two share the month folders as each is free,
/// ``PendingListing``): on a thread of its own it cost a thread's start and the compactor's wait for
/// its check, and one new day into the year took 6.00 -> 5.57 and 6.54 -> 6.23 ms, a compaction with
/// nothing to do 4.28 -> 3.95 ms, once it ran here (medians of 30 alternating runs). What can wait
/// (``Obsolete``) is left to the caller: removing a file that holds data waits for the device where
/// freed blocks are trimmed at once (0.4 ms here, of 0.14 ms CPU: `Benchmarks/compare/replace_file.c`).
enum SegmentSweep {
    /// Files no reader of the published generation opens, and the folders they may leave empty:
    /// removed in this order, by anyone, at any time before the run publishes (their names are of
    /// generations up to the published one, which the run never writes).
    struct Obsolete: Sendable {
        var files: [String] = []
        var folders: [String] = []
        var isEmpty: Bool { files.isEmpty && folders.isEmpty }

        /// Removes what can be removed; what cannot is left for the next run.
        func remove() {
            for file in files { FileSystem.remove(file) }
            for folder in folders { FileSystem.removeDirectoryIfEmpty(folder) }
        }
    }

    /// The published generation's months whose segments are missing, of another size than the
    /// manifest says, or that a read found damaged (``DamageLog``), and what was found.
    struct Damage: Sendable {
        var months = Set<MonthIndex>()
        var findings: [String] = []
    }

    /// Sweeps `layout`'s segments, keeping (and checking) those `published` names; gives what the
    /// check found, and what is left to remove: the files of earlier runs that hold no published
    /// segment, the manifest the last run replaced (manifest-v4 §1) and emptied folders.
    static func run(_ layout: StoreLayout, keeping published: Manifest?) -> (Damage, Obsolete) {
        let files = SegmentFiles(layout)
        // A file's segments are neighbours: a path hashed per file, not per segment.
        var kept = Set<String>()
        var latest: String?
        for s in published?.segments ?? [] where s.path != latest {
            kept.insert(s.path)
            latest = s.path
        }
        let (leftovers, older) = files.all.filter { !kept.contains($0.relativePath) }.partitioned {
            $0.isLeftover(after: published?.generation ?? 0)
        }
        for file in leftovers { FileSystem.remove(layout.storeDirectory + "/" + file.relativePath) }
        FileSystem.remove(layout.manifestPath + ".tmp")
        var obsolete = Obsolete()
        if FileSystem.exists(layout.replacedManifestPath) { obsolete.files.append(layout.replacedManifestPath) }
        obsolete.files += older.map { layout.storeDirectory + "/" + $0.relativePath }
        obsolete.folders = files.folders.map { layout.segmentsDirectory + "/" + $0 }
        return (files.damage(published, layout: layout), obsolete)
    }
}

/// The files under `segments/`, with their sizes: in the folder itself, and in the per-type
/// folders of stores written before segments shared one folder.
private struct SegmentFiles {
    struct File {
        /// As the manifest names it: `segments/<name>` or `segments/<type>/<name>`.
        var relativePath: String
        var size: Int

        /// A temporary, or a segment of a generation after `published`: what a crashed run left.
        func isLeftover(after published: UInt64) -> Bool {
            let slash = relativePath.utf8.lastIndex(of: UInt8(ascii: "/"))
            let name = slash.map { relativePath[relativePath.index(after: $0)...] } ?? relativePath[...]
            return name.hasSuffix(".tmp") || (Compactor.generation(ofSegmentFile: name).map { $0 > published } ?? false)
        }
    }

    var all: [File] = []
    var folders: [String] = []

    init(_ layout: StoreLayout) {
        for entry in (try? FileSystem.list(layout.segmentsDirectory, sorted: false)) ?? [] {
            guard entry.isDirectory else {
                all.append(Self.file("segments/" + entry.name, entry, layout))
                continue
            }
            folders.append(entry.name)
            let folder = layout.segmentsDirectory + "/" + entry.name
            for inner in (try? FileSystem.list(folder, sorted: false)) ?? [] where !inner.isDirectory {
                all.append(Self.file("segments/" + entry.name + "/" + inner.name, inner, layout))
            }
        }
    }

    /// A listed file; a link's size is its target's, as a reader opening it would see.
    private static func file(_ relativePath: String, _ entry: FileSystem.Entry, _ layout: StoreLayout) -> File {
        guard entry.isSymlink else { return File(relativePath: relativePath, size: entry.size) }
        let size = (try? FileSystem.status(layout.storeDirectory + "/" + relativePath))?.size ?? -1
        return File(relativePath: relativePath, size: size)
    }

    /// UTC months of `published` whose file is missing, has the wrong size, or that a read found
    /// damaged (``DamageLog``): every month with a segment in such a file, one finding per file.
    func damage(_ published: Manifest?, layout: StoreLayout) -> SegmentSweep.Damage {
        guard let published else { return SegmentSweep.Damage() }
        let reported = DamageLog.read(layout)
        var sizes: [String: Int] = [:]
        for f in all { sizes[f.relativePath] = f.size }
        var damage = SegmentSweep.Damage()
        for file in published.files {
            let problem: String
            if reported.contains(file.path) {
                problem = "a read found it damaged"
            } else if let size = sizes[file.path] {
                guard size != file.size else { continue }
                problem = "\(size) bytes, the manifest says \(file.size)"
            } else {
                problem = "missing"
            }
            let months = Set(published.segments.lazy.filter { $0.path == file.path }.map(\.monthIndex))
            damage.months.formUnion(months)
            let named = months.sorted { $0.rawValue < $1.rawValue }.map { monthKey(year: $0.year, month: $0.month) }
            damage.findings.append(
                "\(layout.storeDirectory)/\(file.path): \(problem); rebuilding "
                    + "\(named.joined(separator: ", ")) from the raw files")
        }
        return damage
    }
}

extension Array {
    /// The elements for which `belongs` holds, and the others, each in order.
    fileprivate func partitioned(by belongs: (Element) -> Bool) -> (matching: [Element], others: [Element]) {
        var matching: [Element] = []
        var others: [Element] = []
        for e in self {
            if belongs(e) { matching.append(e) } else { others.append(e) }
        }
        return (matching, others)
    }
}
