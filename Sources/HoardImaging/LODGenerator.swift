import HoardCore

/// Generated LODs, previews and thumbnails, through libvips (no hand-written resampling): for every asset, the
/// missing lower LODs (@1x, @2x, @4x below the largest shipped scale), a *preview* of about 32 px per tile for a
/// first render, and a thumbnail of at most 256 px a side for the web page.
///
/// An animated source (GIF, APNG, WebP) gets a preview and a thumbnail of its first frame, still, and no lower LODs;
/// a WebM video gets nothing (libvips does not decode video).
///
/// Deterministic: libvips' Lanczos shrink and fixed encoder settings, no metadata, so the same source always gives
/// the same bytes. LODs keep the source's type; previews and thumbnails are WebP. On by default; a pack turns it off
/// with `"plugins": {"hoard.generate-lods": false}`.
public struct LODGenerator: PictureGenerator {
    /// `hoard.generate-lods`.
    public let id = "hoard.generate-lods"
    /// True.
    public let isEnabledByDefault = true
    /// Pixels per tile of a preview.
    public static let previewTilePixels = 32
    /// The longest side of a thumbnail.
    public static let thumbnailSide = 256
    /// The lower scales filled in when missing (3 and 8 are never generated: they are not lower powers of two).
    public static let generatedScales = [1, 2, 4]

    /// Removes what metadata libvips' encoders add.
    private static let stripper = MetadataStripper()

    /// Creates the generator.
    public init() {}

    /// What a request is turned into: a role, a box and a type per picture, in the order they are made.
    private func targets(_ request: GenerationRequest) -> [(role: GeneratedPicture.Role, width: Int, height: Int, type: MediaType)]? {
        guard request.source.mediaType.isStillDecodable else { return nil }
        let base = request.baseSize
        let shipped = Set(request.asset.variants.map(\.scale))
        // A moving picture gets no lower LODs (they would be still); its preview and thumbnail are its first frame.
        let top = request.source.isAnimated ? 1 : shipped.max() ?? 1
        var targets: [(role: GeneratedPicture.Role, width: Int, height: Int, type: MediaType)] = Self.generatedScales
            .filter { $0 < top && !shipped.contains($0) }
            .map { (GeneratedPicture.Role.variant(scale: $0), base.width * $0, base.height * $0, request.source.mediaType) }
        let ratio = Double(Self.previewTilePixels) / Double(request.tilePixels)
        targets.append((.preview, Self.side(base.width, ratio), Self.side(base.height, ratio), .webp))
        targets.append((.thumbnail, Self.thumbnailSide, Self.thumbnailSide, .webp))
        return targets
    }

    /// The recipe version: raise it when what a target list gives changes (encoder settings, the shrink), so a
    /// regeneration makes new jobs.
    public static let recipeVersion = 1

    /// Its output depends on the source's bytes and the targets alone (boxes and types, in order: each is shrunk from
    /// the next larger), so two assets of one picture with the same targets share a job whatever their names.
    public func recipe(for request: GenerationRequest) -> GenerationRecipe? {
        guard let targets = targets(request) else { return nil }
        let boxes = targets.map { "\($0.role.name)=\($0.width)x\($0.height):\($0.type.rawValue)" }
        return GenerationRecipe(key: "\(id)/\(Self.recipeVersion) " + boxes.joined(separator: ","), roles: targets.map(\.role))
    }

    /// The missing lower LODs, the preview and the thumbnail. Throws an `UNREADABLE_IMAGE` warning when libvips cannot
    /// decode the source or warns while decoding it (the asset then has no generated pictures).
    public func generate(_ request: GenerationRequest, source: UnsafeRawBufferPointer) throws(Problem) -> [GeneratedPicture] {
        guard let targets = targets(request) else { return [] }
        let outputs: [VipsScaler.Output]
        do {
            outputs = try VipsScaler.shrink(
                source, of: request.source.mediaType, width: request.source.width, height: request.source.height,
                to: targets.map { VipsScaler.Target(width: $0.width, height: $0.height, type: $0.type) })
        } catch {
            throw Problem(
                .unreadableImage, "\(error.description); no LODs, preview or thumbnail were generated for it: re-save the picture",
                severity: .warning)
        }
        var pictures: [GeneratedPicture] = []
        for (target, output) in zip(targets, outputs) {
            // libvips' encoders may still write an EXIF block (resolution, orientation): cut it out, byte for byte.
            let clean = (try? Self.stripper.rewrite(output.bytes, mediaType: target.type)?.apply(to: output.bytes)) ?? output.bytes
            pictures.append(GeneratedPicture(role: target.role, bytes: clean, mediaType: target.type))
        }
        return pictures
    }

    /// A side scaled by `ratio`, at least 1 px.
    private static func side(_ pixels: Int, _ ratio: Double) -> Int { max(1, Int((Double(pixels) * ratio).rounded())) }
}
