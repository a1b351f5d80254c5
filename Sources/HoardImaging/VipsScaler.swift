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

    /// Shrinks `source`, a picture of type `sourceType`, to fit `width`×`height` (never enlarging) and encodes it as `type`.
    static func shrink(
        _ source: UnsafeRawBufferPointer, of sourceType: MediaType, toFit width: Int, _ height: Int, as type: MediaType
    ) throws(ProblemMessage)
        -> Output
    {
        guard isStarted else { throw ProblemMessage("libvips did not start: \(lastError())") }
        guard let base = source.baseAddress, source.count > 0 else { throw ProblemMessage("the picture is empty") }
        var image: UnsafeMutablePointer<VipsImage>?
        let isPNG: Int32 = sourceType == .png ? 1 : 0
        guard hoard_vips_thumbnail(base, source.count, Int32(clamping: width), Int32(clamping: height), isPNG, &image) == 0, let image else {
            throw ProblemMessage("libvips cannot decode it: \(lastError())")
        }
        defer { hoard_vips_release(image) }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let format: Int32 = switch type {
        case .png: 0
        case .jpeg: 1
        case .webp: 2
        }
        guard hoard_vips_save(image, format, &buffer, &length) == 0, let buffer else {
            throw ProblemMessage("libvips cannot encode a \(type.rawValue): \(lastError())")
        }
        defer { hoard_vips_free(buffer) }
        return Output(
            bytes: [UInt8](UnsafeRawBufferPointer(start: buffer, count: length)),
            width: Int(vips_image_get_width(image)), height: Int(vips_image_get_height(image)))
    }

    /// libvips' last error message, first line only; clears it.
    private static func lastError() -> String {
        let message = hoard_vips_error().map { String(cString: $0) } ?? ""
        hoard_vips_clear_error()
        return message.split(separator: "\n").first.map(String.init) ?? "unknown error"
    }
}
