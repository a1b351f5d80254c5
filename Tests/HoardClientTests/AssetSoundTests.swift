import Foundation
import HoardClient
import HoardCore
import Testing

@Suite("What a client plays of a sound")
struct AssetSoundTests {
    /// A listed Ogg sound as the server sends it, with its compatible rendition when `compatible` is true.
    private func listed(compatible: Bool) throws -> ManifestAsset {
        let ogg = String(repeating: "a", count: 64)
        let m4a = String(repeating: "b", count: 64)
        let rendition = #","compatible":{"digest":"sha256:\#(m4a)","width":0,"height":0,"size":2100,"mediaType":"audio/mp4"}"#
        let json = #"""
            {"digest":"sha256:\#(String(repeating: "c", count: 64))","kind":"audio","name":"Rain","pack":"sounds",
             "footprint":{"width":1,"height":1},
             "variants":[{"scale":1,"digest":"sha256:\#(ogg)","width":0,"height":0,"size":3000,"mediaType":"audio/ogg"}]\#(compatible ? rendition : "")}
            """#
        return try JSONDecoder().decode(ManifestAsset.self, from: Data(json.utf8))
    }

    @Test func aDeviceThatCannotPlayOggGetsTheCompatibleRendition() throws {
        let asset = try listed(compatible: true)
        let sound = try #require(asset.sound { $0 != .ogg })
        #expect(sound.isCompatible && sound.mediaType == .m4a && sound.size == 2100)
        #expect(sound.digest == asset.compatible?.digest)
    }

    @Test func aDeviceThatPlaysTheSoundGetsTheSoundItself() throws {
        let asset = try listed(compatible: true)
        let sound = try #require(asset.sound { _ in true })
        #expect(!sound.isCompatible && sound.mediaType == .ogg && sound.digest == asset.variants.first?.digest)
    }

    @Test func withoutARenditionTheSoundIsPlayedAnyway() throws {
        let asset = try listed(compatible: false)
        #expect(asset.compatible == nil)
        #expect(asset.sound { _ in false }?.isCompatible == false)
    }
}
