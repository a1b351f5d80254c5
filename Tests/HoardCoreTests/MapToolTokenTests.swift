import Foundation
import HoardCore
import Testing

/// ``XMLScanner`` reads plain XML and nothing that could expand or fetch text; ``MapToolToken`` reads what MapTool
/// writes in a token file.
@Suite struct MapToolTokenTests {
    static let md5 = "0123456789abcdef0123456789abcdef"

    static func content(name: String = "Goblin", footprint: String? = "ElV+IsLXSf2p0cU48MKWTQ==", head: String = "") -> [UInt8] {
        let size = footprint.map {
            "<sizeMap><entry><java-class>net.rptools.maptool.model.SquareGrid</java-class>"
                + "<net.rptools.maptool.model.GUID><baGUID>\($0)</baGUID></net.rptools.maptool.model.GUID></entry></sizeMap>"
        } ?? ""
        return Array("""
            \(head)<net.rptools.maptool.model.Token>
              <id><baGUID>wKgCA0jwi2MzAAAAQIgAAA==</baGUID></id>
              <imageAssetMap>
                <entry><string>alternate</string><net.rptools.lib.MD5Key><id>ffffffffffffffffffffffffffffffff</id></net.rptools.lib.MD5Key></entry>
                <entry><null/><net.rptools.lib.MD5Key><id>\(md5)</id></net.rptools.lib.MD5Key></entry>
              </imageAssetMap>
              <snapToScale>true</snapToScale><width>50</width><height>50</height>
              \(size)
              <name>\(name)</name>
              <macroPropertiesMap><entry><int>1</int><name>not the token's name</name></entry></macroPropertiesMap>
            </net.rptools.maptool.model.Token>
            """.utf8)
    }

    static func failure(_ bytes: [UInt8]) -> String? {
        do {
            _ = try MapToolToken.parse(contentXML: bytes)
            return nil
        } catch {
            return error.message
        }
    }

    static func scanFailure(_ text: String) -> String? {
        do {
            try XMLScanner.scan(Array(text.utf8)) { _ in }
            return nil
        } catch {
            return error.message
        }
    }

    @Test func readsTheNameTheDefaultImageAndTheFootprint() throws {
        let token = try MapToolToken.parse(contentXML: Self.content(name: "Goblin &amp; Boss &#x1F409; <![CDATA[<b>]]>"))
        #expect(token.name == "Goblin & Boss \u{1F409} <b>")
        #expect(token.imageID == Self.md5)
        #expect(token.footprintName == "Large")
        #expect(token.footprint == Footprint(width: 2, height: 2))
    }

    @Test(arguments: [
        ("djLnNrpmT/mtic6UWrosXA==", 1), ("hOHPGQMbQySliL5tJxjVow==", 1), ("8OZKI+aTQ9itWI/sdD7BpA==", 3),
        ("aWMVJcYTRX2zn1vSP1eXpw==", 4), ("fwABAdBlFSoHAAAAKgABAA==", 3), ("RYPbjX0YR9+PVse7/KTenQ==", 8),
    ])
    func standardFootprintsHaveTheSidesOfTheSizeWords(id: String, side: Int) throws {
        #expect(try MapToolToken.parse(contentXML: Self.content(footprint: id)).footprint == Footprint(width: side, height: side))
    }

    @Test func aTokenWithoutASizeIsMediumAndAnUnknownSizeIsNone() throws {
        #expect(try MapToolToken.parse(contentXML: Self.content(footprint: nil)).footprint == .single)
        let custom = try MapToolToken.parse(contentXML: Self.content(footprint: "c2oQBvpUR9KdqUu0BCXAnA=="))
        #expect(custom.footprint == nil && custom.footprintName == nil)
    }

    @Test func namesLoseControlAndBidiCharactersAndSlashes() throws {
        let token = try MapToolToken.parse(contentXML: Self.content(name: "  Evil&#x202E;gnp.exe/boss&#7;  "))
        #expect(token.name == "Evilgnp.exe-boss")
    }

    @Test func declarationsAndEntitiesAreRefused() {
        let laughs = #"<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>"#
        #expect(Self.failure(Self.content(head: laughs))?.contains("DTD") == true)
        #expect(Self.failure(Self.content(name: "&lol2;"))?.contains("&lol2;") == true)
        let external = #"<?xml version="1.0"?><!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>"#
        #expect(Self.failure(Self.content(name: "&xxe;", head: external)) != nil)
    }

    @Test func malformedDocumentsAreRefused() {
        let whole = Self.content()
        for cut in [0, 1, 40, 200, whole.count - 2] {
            #expect(Self.failure(Array(whole.prefix(cut))) != nil, "cut at \(cut)")
        }
        #expect(Self.scanFailure("<a><b></a></b>")?.contains("closes") == true)
        #expect(Self.scanFailure("<a x=1/>") != nil)
        #expect(Self.scanFailure("<a></a><b/>")?.contains("second root") == true)
        #expect(Self.scanFailure("<a>&#0;</a>") != nil)
        #expect(Self.scanFailure("<a x='1>'  y=\"&amp;\"/>") == nil)
        #expect(Self.failure([0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E]) != nil)
        let deep = String(repeating: "<a>", count: XMLScanner.maxDepth + 1) + String(repeating: "</a>", count: XMLScanner.maxDepth + 1)
        #expect(Self.scanFailure(deep)?.contains("nested") == true)
    }

    @Test func mapsCampaignsAndTokensWithoutAnImageAreNotTokens() {
        let map = Array("<net.rptools.maptool.util.PersistenceUtil_-PersistedMap><zone/></net.rptools.maptool.util.PersistenceUtil_-PersistedMap>".utf8)
        #expect(Self.failure(map)?.contains("map (.rpmap)") == true)
        #expect(Self.failure(Array("<net.rptools.maptool.model.Token><name>x</name></net.rptools.maptool.model.Token>".utf8))?.contains("no image") == true)
    }

    @Test func anAssetDescriptorGivesItsExtensionAndRefusesEmbeddedImages() throws {
        let descriptor = "<net.rptools.maptool.model.Asset><id><id>\(Self.md5)</id></id><name>g</name><extension>PNG</extension><image/>"
            + "</net.rptools.maptool.model.Asset>"
        #expect(try MapToolToken.parse(assetXML: Array(descriptor.utf8)) == "png")
        let embedded = descriptor.replacingOccurrences(of: "<image/>", with: "<image>iVBORw0KGgo=</image>")
        #expect(throws: XMLScanner.Failure.self) { try MapToolToken.parse(assetXML: Array(embedded.utf8)) }
    }
}
