import CVips
import HoardCore

/// The only code that calls libvips: decodes an encoded picture with libvips' limits (streaming access,
/// shrink-on-load, fail on any decoding error), shrinks it to fit a box and encodes the result without metadata.
///
/// Callers MUST have checked the picture's header against the import limits first: libvips trusts the header's
/// pixel size when it plans the decode.
enum VipsScaler {
    /// Whether libvips started (once per process).
    private static let isStarted: Bool = hoard_vips_start() == 0

    /// A shrunk, encoded picture.
    struct Output {
        var bytes: [UInt8]
        var width: Int
        var height: Int
    }

    /// A box to shrink into and the type to encode the result as.
    struct Target {
        var width: Int
        var height: Int
        var type: MediaType
    }

    /// Shrinks `source`, a picture of type `sourceType` and `width`×`height` pixels, to fit each target's box
    /// (never enlarging) and encodes each result as its type; returns the outputs in the targets' order.
    ///
    /// The source is decoded once: the largest target is shrunk from it (JPEG and WebP with shrink-on-load) and each
    /// smaller one from the next larger result, held in memory. A decode takes as long as a WebP encode of a
    /// thumbnail, so decoding once per picture rather than once per target is most of the generation's speed.
    static func shrink(
        _ source: UnsafeRawBufferPointer, of sourceType: MediaType, width: Int, height: Int, to targets: [Target]
    ) throws(ProblemMessage) -> [Output] {
        guard isStarted else { throw ProblemMessage(lastError()) }
        guard let base = source.baseAddress, source.count > 0 else { throw ProblemMessage("the picture is empty") }
        func scale(_ target: Target) -> Double {
            min(1, Double(target.width) / Double(max(1, width)), Double(target.height) / Double(max(1, height)))
        }
        let order = targets.indices.sorted { scale(targets[$0]) > scale(targets[$1]) }
        var outputs = [Output?](repeating: nil, count: targets.count)
        var larger: OpaquePointer?
        defer { if let larger { hoard_vips_release(larger) } }
        for index in order {
            let target = targets[index]
            var image: OpaquePointer?
            let status: Int32
            if let larger {
                status = hoard_vips_shrink(larger, Int32(clamping: target.width), Int32(clamping: target.height), &image)
            } else {
                let isPNG: Int32 = sourceType == .png ? 1 : 0
                status = hoard_vips_thumbnail(
                    base, source.count, Int32(clamping: target.width), Int32(clamping: target.height), isPNG, &image)
            }
            guard status == 0, let image else { throw ProblemMessage("libvips cannot decode it: \(lastError())") }
            if let larger { hoard_vips_release(larger) }
            larger = image
            outputs[index] = try encode(image, as: target.type)
        }
        return outputs.map { $0! }
    }

    /// Encodes an image without metadata.
    private static func encode(_ image: OpaquePointer, as type: MediaType) throws(ProblemMessage) -> Output {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let format: Int32 = switch type {
        case .png: 0
        case .jpeg: 1
        case .webp: 2
        case .gif, .webm, .ogg, .mp3, .flac, .wav, .m4a, .webmAudio:
            throw ProblemMessage("Hoard does not encode \(type.rawValue); generated pictures are PNG, JPEG or WebP")
        }
        guard hoard_vips_save(image, format, &buffer, &length) == 0, let buffer else {
            throw ProblemMessage("libvips cannot encode a \(type.rawValue): \(lastError())")
        }
        defer { hoard_vips_free(buffer) }
        return Output(
            bytes: [UInt8](UnsafeRawBufferPointer(start: buffer, count: length)),
            width: Int(hoard_vips_width(image)), height: Int(hoard_vips_height(image)))
    }

    /// libvips' last error message, first line only; clears it.
    private static func lastError() -> String {
        let message = hoard_vips_error().map { String(cString: $0) } ?? ""
        hoard_vips_clear_error()
        return message.split(separator: "\n").first.map(String.init) ?? "unknown error"
    }
}
