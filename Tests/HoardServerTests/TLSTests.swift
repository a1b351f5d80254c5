import Foundation
import HoardPlugins
import HoardClient
import HoardClientNIO
import HoardCore
import HoardServer
import HummingbirdTesting
import NIOSSL
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `hoard serve --tls-cert --tls-key`: HTTPS and WSS with a certificate the test makes (openssl), hot blobs on the
/// fast path under TLS, and a renewed certificate served without a restart.
@Suite(.timeLimit(.minutes(2))) struct TLSTests {
    /// A self-signed certificate for localhost and 127.0.0.1 and its key, made by the openssl command.
    struct Certificate {
        let certificate: String
        let key: String

        init(in directory: String, name: String) throws {
            certificate = "\(directory)/\(name).pem"
            key = "\(directory)/\(name)-key.pem"
            let outcome = try ChildProcess.run([
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=\(name)", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
            ])
            guard outcome.status == 0 else { throw CertificateError("openssl failed (\(outcome.status)): \(outcome.errorText)") }
        }
    }

    struct CertificateError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// One GET over `exchange`: status and body.
    static func get(_ exchange: NIOHTTPExchange, _ url: String, token: String? = nil) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: try #require(URL(string: url)))
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let response = try await exchange.stream(request, uploadFile: nil)
        var body = Data()
        for try await chunk in response.body { body += chunk }
        return (response.response.statusCode, body)
    }

    @Test func httpsServesBlobsAndHealthAndALiveSocketAndReloadsARenewedCertificate() async throws {
        let directory = NSTemporaryDirectory() + "hoard-tls-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Certificate(in: directory, name: "first")
        let renewed = try Certificate(in: directory, name: "renewed")
        // Where the server reads them, as an ACME client's live/ folder.
        let served = (certificate: "\(directory)/fullchain.pem", key: "\(directory)/privkey.pem")
        try FileManager.default.copyItem(atPath: first.certificate, toPath: served.certificate)
        try FileManager.default.copyItem(atPath: first.key, toPath: served.key)

        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        var configuration = fixture.configuration
        let store = try CertificateStore(certificatePath: served.certificate, keyPath: served.key)
        configuration.certificates = store
        configuration.certificateCheckInterval = .milliseconds(100)
        let app = try await buildApplication(configuration)
        let token = fixture.hostToken
        let blob = try #require(try fixture.assets("token").first)
        try await app.test(.live) { client in
            let base = "https://localhost:\(try #require(client.port))"
            let trustingFirst = try NIOHTTPExchange(maxConnections: 2, timeout: 30, caCertificates: first.certificate)
            let health = try await Self.get(trustingFirst, base + "/healthz")
            #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self).contains("ok"))
            // A blob twice: the second answer comes from the fast path, through TLS, with the same bytes.
            let cold = try await Self.get(trustingFirst, base + "/v1/blobs/\(blob)", token: token)
            let hot = try await Self.get(trustingFirst, base + "/v1/blobs/\(blob)", token: token)
            #expect(cold.status == 200 && hot.status == 200 && hot.body == cold.body)
            #expect(digest(of: [UInt8](hot.body)).description == blob)
            // Plain HTTP on the TLS port gets no answer.
            let plain = NIOHTTPExchange(maxConnections: 1, timeout: 5)
            await #expect(throws: (any Error).self) { try await Self.get(plain, "http://localhost:\(try #require(client.port))/healthz") }

            // A live socket over wss.
            let created = try await Self.post(trustingFirst, base + "/v1/sessions", token: token, body: ["name": "Crypt", "map": [:] as [String: Any]])
            let session = try #require(created["id"] as? String)
            let texts = try await LiveClient.exchange(
                port: try #require(client.port), session: session, token: token, until: 1, host: "localhost",
                tls: .hoardClient(caCertificates: first.certificate))
            #expect(!texts.isEmpty, "the live channel answered over wss")

            // Renewal as ACME clients do it: new files moved into place. New connections get the new certificate.
            for (from, to) in [(renewed.certificate, served.certificate), (renewed.key, served.key)] {
                try FileManager.default.copyItem(atPath: from, toPath: to + ".new")
                #expect(rename(to + ".new", to) == 0)
            }
            let trustingRenewed = try NIOHTTPExchange(maxConnections: 1, timeout: 30, caCertificates: renewed.certificate)
            #expect(await Fixture.eventually(seconds: 30) { (try? await Self.get(trustingRenewed, base + "/healthz").status) == 200 })
            #expect(store.leaf.contains("renewed"), "\(store.leaf)")
            let stillTrustingFirst = try NIOHTTPExchange(maxConnections: 1, timeout: 30, caCertificates: first.certificate)
            await #expect(throws: (any Error).self) { try await Self.get(stillTrustingFirst, base + "/healthz") }
        }
    }

    /// One POST of a JSON body over `exchange`; the answer's JSON object.
    static func post(_ exchange: NIOHTTPExchange, _ url: String, token: String, body: [String: Any]) async throws -> [String: Any] {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let response = try await exchange.stream(request, uploadFile: nil)
        var data = Data()
        for try await chunk in response.body { data += chunk }
        return (try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}
