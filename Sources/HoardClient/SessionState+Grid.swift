import HoardCore

// The map's geometry for apps: the one `HoardCore.Grid` the server judges moves with, so an app draws, picks and
// measures cells as the server checks them and need not write hex coordinates itself.
extension SessionState {
    /// The map's grid (square when it names none or one the schema does not allow): neighbours, distance and the
    /// cells a token of a footprint covers (``Grid/cells(of:at:)``, what a move is checked against).
    public var grid: Grid { Grid(map: map["grid"]) ?? .square }

    /// The map's cell width in pixels at @1x (`grid.tilePixels`; 256 when it says none, as packs default).
    public var tilePixels: Int {
        guard case .number(let pixels)? = map["grid"]?["tilePixels"], pixels >= 1, pixels <= 4096 else { return 256 }
        return Int(pixels)
    }

    /// Cell ↔ pixel on a hex map whose hex pictures are ``tilePixels`` wide and `height` high (default: as high as
    /// wide, as Wesnoth's art is and the web page draws it); nil on a square map, where cell (x, y) is the square from
    /// (x, y) × ``tilePixels``.
    public func hexPixels(height: Double? = nil) -> HexPixels? {
        guard case .hex(let layout) = grid else { return nil }
        let width = Double(tilePixels)
        return HexPixels(layout: layout, width: width, height: height ?? width)
    }
}
