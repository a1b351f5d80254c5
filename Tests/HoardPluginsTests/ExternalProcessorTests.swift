import Foundation
import HoardCore
import Testing

@testable import HoardPlugins

@Suite("Out-of-process processors")
struct ExternalProcessorTests {
    @Test func aPictureTooLargeToSendIsSkippedWithAWarningWithoutStartingThePlugin() throws {
        let manifest = PluginManifest(
            id: "never-started", version: "1", protocol: 1, hooks: [.processor], command: ["/nonexistent/plugin"])
        let processor = ExternalProcessor(channel: PluginChannel(manifest: manifest, folder: "/nonexistent"))
        let variant = AssetDescriptor.Variant(
            scale: 1, digest: try #require(Digest(bytes: [UInt8](repeating: 0, count: 32))), width: 256, height: 256, size: 1, mediaType: .png)
        let request = GenerationRequest(
            asset: PlannedAsset(kind: .token, name: "ogre", footprint: .single, variants: [variant], entries: ["tokens/ogre.png"]),
            source: variant, tilePixels: 256)
        let large = [UInt8](repeating: 0, count: ExternalProcessor.maxSourceBytes + 1)
        let problem = large.withUnsafeBytes { buffer in
            Result { () throws(Problem) -> [GeneratedPicture] in try processor.generate(request, source: buffer) }
        }
        guard case .failure(let found) = problem else { Issue.record("a picture over the limit was sent"); return }
        #expect(found.code == .pluginFailure)
        #expect(found.severity == .warning)
    }
}
