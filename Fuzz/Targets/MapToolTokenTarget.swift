import HoardCore

/// MapTool token files' XML (``XMLScanner``, ``MapToolToken``): any bytes are read without crashing or expanding; a
/// token accepted shows an image by a 32-hex-digit key and names no footprint over MapTool's largest, and its name
/// holds no control or bidirectional character and no `/`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMapToolToken(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput(start, count).bytes
    if let token = try? MapToolToken.parse(contentXML: bytes) {
        precondition(token.imageID.count == 32 && token.imageID.allSatisfy(\.isHexDigit), token.imageID)
        precondition(!token.name.contains("/") && token.name.count <= 200, token.name)
        precondition(!token.name.unicodeScalars.contains { $0.properties.generalCategory == .control }, token.name)
        if let footprint = token.footprint { precondition(footprint.width == footprint.height && footprint.width <= 9) }
    }
    if let fileExtension = try? MapToolToken.parse(assetXML: bytes) { precondition(!fileExtension.isEmpty) }
    return 0
}
