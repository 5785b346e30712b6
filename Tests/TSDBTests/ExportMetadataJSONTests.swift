import Testing

@testable import TSDBAppleHealth
@testable import TSDBSynthetic

/// The canonical JSON of an export sample's metadata: keys in UTF-8 byte order at every level, the
/// first member of a repeated key kept, values as written.
@Suite struct ExportMetadataJSONTests {
    func text(_ json: JSONText) -> String {
        var out: [UInt8] = []
        json.append(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func keysAreSortedByTheirBytesAndARepeatedKeyKeepsItsFirstValue() {
        let members: [(String, JSONText)] = [
            ("b", .string("2")), ("a", .number("1.50")), ("é", .string("accent")), ("B", .string("upper")),
            ("b", .string("second b")), ("a", .string("second a")), ("aa", .string("x\"y")),
        ]
        #expect(text(.object(members)) == #"{"B":"upper","a":1.50,"aa":"x\"y","b":"2","é":"accent"}"#)
        #expect(text(.object([])) == "{}")
        #expect(text(.object([("only", .string(""))])) == #"{"only":""}"#)
    }

    @Test func sortingAgreesWithAStableSortOfManyKeys() {
        var rng = SplitMix64(seed: 17)
        for _ in 0..<200 {
            let members: [(String, JSONText)] = (0..<Int.random(in: 0...12, using: &rng)).map { i in
                (String(Int.random(in: 0...6, using: &rng)), .string(String(i)))
            }
            var expected: [(String, String)] = []
            for (k, v) in members.enumerated().sorted(by: {
                $0.element.0.utf8.lexicographicallyPrecedes($1.element.0.utf8)
                    || $0.element.0 == $1.element.0 && $0.offset < $1.offset
            }).map(\.element) where expected.last?.0 != k {
                guard case .string(let s) = v else { continue }
                expected.append((k, s))
            }
            let json = "{" + expected.map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",") + "}"
            #expect(text(.object(members)) == json)
        }
    }
}
