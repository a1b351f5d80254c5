import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The page for people: `/` and its static files under `/web/`, the share page `/s/{id}` and the live table
/// (`/join`, `/join/{code}`, `/table/{id}`).
///
/// The files live in `Sources/HoardServer/Web/Page/` (a SwiftPM resource folder: plain HTML, CSS and JavaScript modules,
/// no build step) and are read into memory once, when the router is built. Every answer carries a strict
/// Content-Security-Policy: scripts, styles and requests only from this origin, no inline script or style,
/// pictures and WebM videos also from `blob:` URLs (fetched with the token and shown through object URLs), no framing. The pages
/// ask for no referrer themselves (`<meta name="referrer">`).
struct WebRoutes: Sendable {
    /// What every page answer carries.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy:
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; media-src blob:; connect-src 'self'; object-src 'none'; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        .xContentTypeOptions: "nosniff",
        .crossOriginResourcePolicy: "same-origin",
    ]

    /// One file of the page, ready to serve.
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
    }

    /// The page's files by name (`app.js`), read from the resource folder; empty when the folder is missing.
    let files: [String: File]

    init(directory: URL? = WebRoutes.resourceDirectory) {
        var files: [String: File] = [:]
        if let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) {
            for name in names {
                guard let type = Self.contentType(name),
                      let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
                else { continue }
                files[name] = File(bytes: ByteBuffer(bytes: data), contentType: type)
            }
        }
        self.files = files
    }

    /// The `Page` folder of the module's resource bundle (`Hoard_HoardServer.resources`, which SwiftPM puts next to
    /// the `hoard` binary and which must be copied along with it), else the source folder of a development
    /// checkout; nil when neither exists, and then the page answers 404 instead of the server failing to start.
    /// (Not `Bundle.module`: it stops the process when the bundle is missing.)
    static var resourceDirectory: URL? {
        let bundle = "Hoard_HoardServer.resources/Page"
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent(bundle),
            executable.appendingPathComponent(bundle),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Page"),
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("index.html").path) }
    }

    static func contentType(_ name: String) -> String? {
        switch (name as NSString).pathExtension {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        default: nil
        }
    }

    func register(on endpoints: Endpoints) {
        endpoints.on(.get, "/") { _, _ in try serve("index.html") }
        endpoints.on(.get, "/web/{file}") { _, context in try serve(context.parameter("file")) }
        endpoints.on(.get, "/s/{id}") { _, _ in try serve("share.html") }
        // The live table: a player joins by code (`/join`, `/join/ABCD-EFGH`); a member opens a session's (`/table/{id}`).
        endpoints.on(.get, "/join") { _, _ in try serve("table.html") }
        endpoints.on(.get, "/join/{code}") { _, _ in try serve("table.html") }
        endpoints.on(.get, "/table/{id}") { _, _ in try serve("table.html") }
    }

    /// One file, with the security headers; 404 for any name that is not one of the page's files.
    func serve(_ name: String) throws -> Response {
        guard let file = files[name] else { throw APIError.notFound("the page has no file '\(name.prefix(100))'") }
        var headers = Self.securityHeaders
        headers[.contentType] = file.contentType
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
    }
}
