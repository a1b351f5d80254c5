/// What Hoard reads from a MapTool token file (`.rptok`): the token's name, the image it shows and its size.
///
/// A token file is a zip that MapTool writes (`PersistenceUtil.saveToken`): `content.xml`, the token serialised by
/// XStream (root `net.rptools.maptool.model.Token`), `properties.xml`, thumbnails, and for each image an XML
/// descriptor `assets/<md5>` (root `net.rptools.maptool.model.Asset`: name, extension) beside its bytes
/// `assets/<md5>.<extension>`. The token's image is the `imageAssetMap` entry whose key is `<null/>`; its size is
/// the footprint its `sizeMap` names for the square grid, by the fixed ids of MapTool's standard footprints (Medium
/// when it names none).
public struct MapToolToken: Sendable, Hashable {
    /// The token's `<name>`, trimmed, without control or bidirectional characters, `/` made `-`, at most 200
    /// characters; may be empty.
    public var name: String
    /// The MD5 key (32 hex digits) of the image the token shows.
    public var imageID: String
    /// The footprint's name (`Medium`, `Large`), when the size map names one of MapTool's standard footprints.
    public var footprintName: String?
    /// The footprint in tiles, nil when the token names none Hoard knows.
    public var footprint: Footprint?

    /// The root element of a token's `content.xml`.
    public static let rootElement = "net.rptools.maptool.model.Token"

    /// Reads a token's `content.xml`. Throws a message for the file's author: not well-formed, a DTD or entity, not a
    /// token (a map or campaign), or no image.
    public static func parse(contentXML bytes: [UInt8]) throws(XMLScanner.Failure) -> MapToolToken {
        var root: String?
        var name = ""
        var entries: [(isDefault: Bool, id: String)] = []
        var entryIsDefault: Bool?
        var sizes: [(grid: String, id: String)] = []
        var grid = ""
        try XMLScanner.scan(bytes) { event throws(XMLScanner.Failure) in
            switch event {
            case .start(let path):
                if path.count == 1 {
                    root = path[0]
                    guard path[0] == rootElement else { throw XMLScanner.Failure(message: Self.notAToken(path[0]), offset: 0) }
                }
                if path.count == 3, path[1] == "imageAssetMap", path[2] == "entry" { entryIsDefault = nil }
                if path.count == 4, path[1] == "imageAssetMap", entryIsDefault == nil { entryIsDefault = path[3] == "null" }
                if path.count == 3, path[1] == "sizeMap", path[2] == "entry" { grid = "" }
            case .text(let path, let text):
                guard path.count >= 2 else { return }
                switch (path[1], path.count) {
                case ("name", 2): name += text
                case ("imageAssetMap", 5) where path[3] == "net.rptools.lib.MD5Key" && path[4] == "id":
                    entries.append((entryIsDefault ?? false, text.trimmed))
                case ("sizeMap", 4) where path[3] == "java-class": grid += text
                case ("sizeMap", 5) where path[4] == "baGUID": sizes.append((grid.trimmed, text.trimmed))
                default: break
                }
            case .end: break
            }
        }
        guard root == rootElement else { throw XMLScanner.Failure(message: notAToken(root ?? ""), offset: 0) }
        guard let image = entries.first(where: \.isDefault) ?? entries.first else {
            throw XMLScanner.Failure(message: "the token names no image (imageAssetMap is empty)", offset: 0)
        }
        guard image.id.count == 32, image.id.allSatisfy(\.isHexDigit) else {
            throw XMLScanner.Failure(message: "the token's image key '\(image.id.prefix(40))' is not an MD5 key", offset: 0)
        }
        // A token without a size has its grid's default footprint, Medium.
        let size = sizes.first { $0.grid.hasSuffix("SquareGrid") } ?? sizes.first
        let footprintName = size.map { standardFootprints[$0.id] } ?? "Medium"
        return MapToolToken(
            name: cleaned(name), imageID: image.id.lowercased(), footprintName: footprintName,
            footprint: footprintName.flatMap(Self.footprint(named:)))
    }

    /// Reads an image descriptor (`assets/<md5>`): the extension of the image's file, nil when it names none. Throws
    /// when it is not a descriptor, or when the image is inside it (Base64, MapTool before 1.3.b64).
    public static func parse(assetXML bytes: [UInt8]) throws(XMLScanner.Failure) -> String? {
        var root: String?
        var fileExtension = ""
        var embedded = false
        try XMLScanner.scan(bytes) { event throws(XMLScanner.Failure) in
            switch event {
            case .start(let path) where path.count == 1: root = path[0]
            case .text(let path, let text) where path.count == 2:
                if path[1] == "extension" { fileExtension += text }
                if path[1] == "image", !text.trimmed.isEmpty { embedded = true }
            default: break
            }
        }
        guard root == "net.rptools.maptool.model.Asset" else {
            throw XMLScanner.Failure(message: "an image descriptor whose root is <\(root ?? "")>, not a MapTool asset", offset: 0)
        }
        guard !embedded else {
            throw XMLScanner.Failure(
                message: "the image is inside its descriptor (MapTool before 1.3.b64); open and save the token in a current MapTool", offset: 0)
        }
        return fileExtension.trimmed.isEmpty ? nil : fileExtension.trimmed.lowercased()
    }

    /// A footprint name's side in tiles: the size words of the default convention (``DefaultNamingConvention/sizeWords``)
    /// and MapTool's other square-grid names (Fine and Diminutive 1, Colossal 6, `N×N squares` N).
    public static func footprint(named name: String) -> Footprint? {
        let word = name.lowercased()
        var side = DefaultNamingConvention.sizeWords[word] ?? ["fine": 1, "diminutive": 1, "colossal": 6][word]
        if side == nil, word.hasSuffix(" squares"), let n = Int(word.prefix { $0.isNumber }), word.hasPrefix("\(n)x\(n) ") {
            side = n
        }
        return side.flatMap { Footprint(width: $0, height: $0) }
    }

    /// The ids (Base64 GUIDs) of MapTool's standard square-grid footprints and their names: those of
    /// `squareGridFootprints.xml`, and the older ids that MapTool 1.3 wrote.
    public static let standardFootprints: [String: String] = [
        "x3T4ePmKTECX7nHwg4NlPA==": "Fine", "uw+DKfi9QlGZ7S3RUhlXIQ==": "Diminutive", "hOHPGQMbQySliL5tJxjVow==": "Tiny",
        "GdAIbe1rQhGOPGxkQard+g==": "Small", "djLnNrpmT/mtic6UWrosXA==": "Medium", "ElV+IsLXSf2p0cU48MKWTQ==": "Large",
        "8OZKI+aTQ9itWI/sdD7BpA==": "Huge", "aWMVJcYTRX2zn1vSP1eXpw==": "Gargantuan", "fMf8quqGSV+Jl+KWjOpT/g==": "Colossal",
        "YhEscXK3TdyztaPgGwhYLA==": "5x5 squares", "AL76yj6DR3mG2thrrmHoJw==": "7x7 squares",
        "RYPbjX0YR9+PVse7/KTenQ==": "8x8 squares", "GqPVkNlcQdSi0ovXWMWfyw==": "9x9 squares",
        "fwABAc1lFSoBAAAAKgABAQ==": "Fine", "fwABAc1lFSoCAAAAKgABAQ==": "Diminutive", "fwABAc5lFSoDAAAAKgABAA==": "Tiny",
        "fwABAc5lFSoEAAAAKgABAA==": "Small", "fwABAc9lFSoFAAAAKgABAQ==": "Medium", "fwABAdBlFSoGAAAAKgABAA==": "Large",
        "fwABAdBlFSoHAAAAKgABAA==": "Huge", "fwABAdFlFSoIAAAAKgABAQ==": "Gargantuan", "fwABAeFlFSoJAAAAKgABAQ==": "Colossal",
    ]

    private static func cleaned(_ name: String) -> String {
        let kept = name.unicodeScalars.filter { !EntryPathPolicy.isForbidden($0) }.map { $0 == "/" ? "-" : Character($0) }
        return String(String(kept).trimmed.prefix(200)).trimmed
    }

    private static func notAToken(_ root: String) -> String {
        switch root {
        case "net.rptools.maptool.util.PersistenceUtil_-PersistedMap":
            "this is a MapTool map (.rpmap), not a token; Hoard reads token files (.rptok) only"
        case "net.rptools.maptool.util.PersistenceUtil_-PersistedCampaign":
            "this is a MapTool campaign (.cmpgn), not a token; Hoard reads token files (.rptok) only"
        default: "content.xml holds <\(root.prefix(80))>, not a MapTool token"
        }
    }
}

extension String {
    fileprivate var trimmed: String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
