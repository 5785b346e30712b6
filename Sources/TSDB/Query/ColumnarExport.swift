extension Store {
    public enum TextFormat: Sendable { case csv, ndjson }

    /// Writes the samples of `type` starting in `[from, to)` as CSV rows (``DayFileWriter/csvHeader``
    /// columns, no header) or NDJSON lines, straight from decoded columns: each dictionary string
    /// is escaped once per segment, not once per row. `flush` receives the bytes in chunks.
    public func writeSamples(
        of type: String, from: Int64 = .min, to: Int64 = .max, format: TextFormat,
        source: String? = nil, flush: ([UInt8]) -> Void
    ) throws(TSDBError) {
        var out: [UInt8] = []
        out.reserveCapacity(1 << 17)
        let filter = source?.lowercased()
        let block = DecodedBlock()
        for segment in try segments(of: type, from: from, to: to) {
            // Pre-rendered fields: for CSV the quoted field, for NDJSON `,"key":value` (empty when absent).
            func render(_ texts: [OptionalText], key: String) -> [[UInt8]] {
                texts.map { t in
                    var b: [UInt8] = []
                    switch (format, t) {
                    case (.csv, .text(let s)): DayFileWriter.appendCSVField(s, to: &b)
                    case (.csv, _): break
                    case (.ndjson, .absent): break
                    case (.ndjson, .null): b = Array(",\"\(key)\":null".utf8)
                    case (.ndjson, .text(let s)):
                        b = Array(",\"\(key)\":".utf8)
                        if key == "metadata" { b += Array(s.utf8) } else { DayFileWriter.appendJSONString(s, to: &b) }
                    }
                    return b
                }
            }
            var typeField: [UInt8] = []
            if format == .csv {
                DayFileWriter.appendCSVField(segment.type, to: &typeField)
            } else {
                typeField = Array("{\"type\":".utf8)
                DayFileWriter.appendJSONString(segment.type, to: &typeField)
            }
            let units = render(segment.units, key: "unit")
            let sources = render(segment.sources, key: "source")
            let devices = render(segment.devices, key: "device")
            let metadata = render(segment.metadata, key: "metadata")
            let keep = (segment.sources + segment.devices).map { t -> Bool in
                guard let filter else { return true }
                return t.string?.lowercased().contains(filter) ?? false
            }
            for b in 0..<segment.blockCount
            where segment.summaries[b].lastStart >= from && segment.summaries[b].firstStart < to {
                try segment.decode(block: b, into: block)
                for i in 0..<block.count {
                    let t = block.starts[i]
                    guard t >= from, t < to else { continue }
                    let src = Int(block.sources[i])
                    let dev = Int(block.devices[i])
                    if filter != nil && !keep[src] && !keep[segment.sources.count + dev] { continue }
                    let (startForm, endForm) = segment.forms[Int(block.forms[i])]
                    let value = segment.value(of: block, at: i)
                    out += typeField
                    if format == .csv {
                        out.append(UInt8(ascii: ","))
                        ISO8601.append(t, startForm, to: &out)
                        out.append(UInt8(ascii: ","))
                        ISO8601.append(block.ends[i], endForm, to: &out)
                        out.append(UInt8(ascii: ","))
                        DayFileWriter.appendValue(value, to: &out)
                        out.append(UInt8(ascii: ","))
                        out += units[Int(block.units[i])]
                        out.append(UInt8(ascii: ","))
                        out += sources[src]
                        out.append(UInt8(ascii: ","))
                        out += devices[dev]
                        out.append(UInt8(ascii: ","))
                        out += metadata[Int(block.metadata[i])]
                    } else {
                        out += Array(",\"start\":\"".utf8)
                        ISO8601.append(t, startForm, to: &out)
                        out += Array("\",\"end\":\"".utf8)
                        ISO8601.append(block.ends[i], endForm, to: &out)
                        out.append(UInt8(ascii: "\""))
                        switch value {
                        case .absent: break
                        case .null: out += Array(",\"value\":null".utf8)
                        default:
                            out += Array(",\"value\":".utf8)
                            DayFileWriter.appendValue(value, to: &out)
                        }
                        out += units[Int(block.units[i])]
                        out += sources[src]
                        out += devices[dev]
                        out += metadata[Int(block.metadata[i])]
                        out.append(UInt8(ascii: "}"))
                    }
                    out.append(0x0A)
                    if out.count >= 1 << 16 {
                        flush(out)
                        out.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        if !out.isEmpty { flush(out) }
    }
}

extension SegmentReader {
    /// The `value` field of sample `i` of a decoded block.
    package func value(of b: DecodedBlock, at i: Int) -> SampleValue {
        let tag = UInt8(truncatingIfNeeded: b.valueTags[i])
        switch tag {
        case ValueTag.absent: return .absent
        case ValueTag.null: return .null
        case ValueTag.numberText: return .numberText(dictionary.numberTexts[Int(b.mantissas[i])])
        default: return .decimal(ExactDecimal(mantissa: b.mantissas[i], scale: tag - ValueTag.decimalBase))
        }
    }
}
