/// The checks that make several files one asset: same aspect ratio, each `@Sx` about S times the base,
/// and (a warning) a base size that matches footprint × tilePixels.
public enum VariantRules {
    /// One file proposed as a variant.
    public struct Candidate: Sendable, Hashable {
        /// The entry it came from.
        public var entry: String
        /// Its LOD scale.
        public var scale: Int
        /// Its pixel size and type.
        public var info: ImageInfo

        /// Creates a candidate.
        public init(entry: String, scale: Int, info: ImageInfo) {
            self.entry = entry
            self.scale = scale
            self.info = info
        }
    }

    /// Relative tolerance for aspect ratio and scale (2%), never less than one pixel per scale step.
    static let tolerance = 0.02
    /// Relative tolerance for footprint × tilePixels (10%): art is often drawn a little over the tile.
    public static let footprintTolerance = 0.10

    /// Every problem among the variants of one asset: errors refuse the pack, warnings are reported.
    public static func check(
        _ candidates: [Candidate], footprint: Footprint, kind: any AssetKindDefinition, tilePixels: Int, grid: PackGrid = .square
    ) -> [Problem] {
        var problems: [Problem] = []
        var byScale: [Int: Candidate] = [:]
        for candidate in candidates.sorted(by: { ($0.scale, $0.entry) < ($1.scale, $1.entry) }) {
            if let first = byScale[candidate.scale] {
                problems.append(Problem(
                    .duplicateVariant, "\(first.entry) already is the @\(candidate.scale)x variant of this asset; keep one",
                    entry: candidate.entry))
            } else {
                byScale[candidate.scale] = candidate
            }
        }
        guard let base = byScale.keys.min().flatMap({ byScale[$0] }) else { return problems }
        let baseWidth = Double(base.info.width) / Double(base.scale)
        let baseHeight = Double(base.info.height) / Double(base.scale)
        for scale in byScale.keys.sorted() where scale != base.scale {
            guard let other = byScale[scale] else { continue }
            let crossA = Double(other.info.width) * Double(base.info.height)
            let crossB = Double(other.info.height) * Double(base.info.width)
            if abs(crossA - crossB) > tolerance * max(crossA, crossB) {
                problems.append(Problem(
                    .variantMismatch,
                    "\(other.info.width)×\(other.info.height) does not have the aspect ratio of \(base.entry) "
                        + "(\(base.info.width)×\(base.info.height)); every variant must show the same picture",
                    entry: other.entry))
                continue
            }
            let expectedWidth = baseWidth * Double(scale)
            let expectedHeight = baseHeight * Double(scale)
            if !isClose(Double(other.info.width), expectedWidth, slack: Double(scale))
                || !isClose(Double(other.info.height), expectedHeight, slack: Double(scale)) {
                problems.append(Problem(
                    .variantMismatch,
                    "as the @\(scale)x variant of \(base.entry) (\(base.info.width)×\(base.info.height) at @\(base.scale)x) it should be "
                        + "about \(Int(expectedWidth.rounded()))×\(Int(expectedHeight.rounded())), not \(other.info.width)×\(other.info.height)",
                    entry: other.entry))
            }
        }
        if kind.checksFootprintAgainstPixels {
            let wantWidth = Double(footprint.width * tilePixels)
            let wantHeight = Double(footprint.height * tilePixels)
            // Each side at most the tile's length, at least its shortest side (a hexagon's transparent corners leave
            // one side shorter), and one of them the full length.
            let sides = [(baseWidth, wantWidth), (baseHeight, wantHeight)]
            let fits =
                sides.allSatisfy { side, want in
                    side <= want * (1 + footprintTolerance) && side >= want * grid.shortestSide * (1 - footprintTolerance)
                } && sides.contains { side, want in abs(side - want) <= footprintTolerance * want }
            if !fits {
                let shape = grid.isHex ? " (one side may be down to √3/2 of that: a hexagon's)" : ""
                problems.append(Problem(
                    .footprintMismatch,
                    "a \(footprint) \(kind.kind) at \(tilePixels) px per tile should be about \(Int(wantWidth))×\(Int(wantHeight)) at @1x\(shape), "
                        + "but this picture is \(Int(baseWidth.rounded()))×\(Int(baseHeight.rounded())) at @1x; fix the footprint in the name "
                        + "or tilePixels in pack.json",
                    entry: base.entry, severity: .warning))
            }
        }
        return problems
    }

    private static func isClose(_ value: Double, _ expected: Double, slack: Double) -> Bool {
        abs(value - expected) <= max(tolerance * expected, slack)
    }
}
