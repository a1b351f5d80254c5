import HoardCore

extension PackPlanner {
    /// The tile size a pack without `tilePixels` is drawn at, read from its own pictures: each asset of a kind whose
    /// size follows its footprint (tokens, objects, textures) whose @1x picture is about square per tile proposes its
    /// width per tile; the size most proposed wins (the smaller on a tie). Nil when no picture proposes one in
    /// 8…4096, and the default (256) then holds.
    ///
    /// Ordinary art is drawn at one size (72 px Wesnoth pictures, 140 px tokens): so it imports without a
    /// `FOOTPRINT_MISMATCH` warning per file, and the pictures that differ from the rest are the ones warned about.
    ///
    /// On a hex pack a picture's long side is the tile, its short side may be down to a regular hexagon's.
    static func inferredTilePixels(_ plans: [AssetPlan], grid: PackGrid = .square, context: ConventionContext) -> Int? {
        var votes: [Int: Int] = [:]
        for plan in plans {
            guard context.definition(of: plan.kind)?.checksFootprintAgainstPixels == true,
                  let base = plan.pictures.min(by: { $0.scale < $1.scale }), base.scale > 0
            else { continue }
            let width = Double(base.picture.info.width) / Double(base.scale * plan.footprint.width)
            let height = Double(base.picture.info.height) / Double(base.scale * plan.footprint.height)
            let (long, short) = (max(width, height), min(width, height))
            guard short > 0, short >= long * grid.shortestSide * (1 - VariantRules.footprintTolerance) else { continue }
            let tile = Int((grid.isHex ? long : (width + height) / 2).rounded())
            if (8...4096).contains(tile) { votes[tile, default: 0] += 1 }
        }
        return votes.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key
    }
}
