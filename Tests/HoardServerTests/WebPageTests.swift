import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// The page for people: served at `/` with its files under `/web/`, always with a strict Content-Security-Policy.
@Suite struct WebPageTests {
    static let csp = HTTPField.Name.contentSecurityPolicy

    @Test func theRootServesThePageWithAStrictContentSecurityPolicy() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                    let policy = try #require(response.headers[Self.csp])
                    #expect(policy.contains("default-src 'self'"))
                    #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
                    #expect(policy.contains("frame-ancestors 'none'"))
                    #expect(response.headers[.xContentTypeOptions] == "nosniff")
                    #expect(response.headers[.setCookie] == nil)
                    #expect(response.text.contains(#"<script type="module" src="/web/app.js"></script>"#))
                }
            }
        }
    }

    @Test func thePageHasNoInlineScriptOrStyle() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                for path in ["/", "/s/anything"] {
                    let html = try await client.execute(uri: path, method: .get) { $0.text }
                    #expect(!html.contains("<style"), "\(path) has a <style> element")
                    #expect(!html.contains(" style="), "\(path) has a style attribute")
                    #expect(!html.contains("<script>"), "\(path) has an inline script")
                    #expect(html.firstMatch(of: try Regex(#"\son[a-z]+\s*="#)) == nil, "\(path) has an inline event handler")
                }
            }
        }
    }

    @Test func everyModuleTheScriptsImportIsServedAsJavaScript() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                var pending = ["app.js", "share.js"]
                var seen: Set<String> = []
                while let file = pending.popLast() {
                    guard seen.insert(file).inserted else { continue }
                    let source = try await client.execute(uri: "/web/\(file)", method: .get) { response in
                        #expect(response.status == .ok, "/web/\(file)")
                        #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                        #expect(response.headers[Self.csp] != nil)
                        return response.text
                    }
                    #expect(!source.contains("innerHTML"), "\(file) uses innerHTML")
                    #expect(!source.contains("eval("), "\(file) uses eval")
                    let imports = try Regex(#"from '\./([a-z]+\.js)'"#)
                    pending += source.matches(of: imports).compactMap { $0.output[1].substring.map(String.init) }
                }
                #expect(seen.count >= 7, "modules: \(seen.sorted())")
                let css = try await client.execute(uri: "/web/style.css", method: .get) { $0.headers[.contentType] }
                #expect(css == "text/css; charset=utf-8")
            }
        }
    }

    @Test func anyOtherFileNameIsNotFound() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                for name in ["nope.js", "..%2FPackage.swift", "%2E%2E%2F%2E%2E%2Fcatalog.sqlite", "index.html%00.js"] {
                    try await client.execute(uri: "/web/\(name)", method: .get) { $0.expectError(.notFound, "NOT_FOUND") }
                }
            }
        }
    }
}
