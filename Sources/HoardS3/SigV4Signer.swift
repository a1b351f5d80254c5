import Crypto
import Foundation

/// An access key and its secret, as S3 issues them.
public struct S3Credentials: Sendable, Hashable {
    /// The access key id (`AWS_ACCESS_KEY_ID`).
    public var accessKeyID: String
    /// The secret access key (`AWS_SECRET_ACCESS_KEY`).
    public var secretAccessKey: String

    /// Credentials as given.
    public init(accessKeyID: String, secretAccessKey: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` from `environment`; nil when either is missing or empty.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Credentials? {
        guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else { return nil }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret)
    }
}

/// AWS Signature Version 4 for the `Authorization` header, the payload signed by its SHA-256
/// (`x-amz-content-sha256`), as S3's "Signature Calculations for the Authorization Header" describes:
/// canonical request → string to sign → signing key (the secret HMAC-chained through day, region, service) → signature.
public struct SigV4Signer: Sendable {
    /// Who signs.
    public var credentials: S3Credentials
    /// The region in the credential scope, e.g. `us-east-1`.
    public var region: String
    /// The service in the credential scope.
    public var service: String

    /// The SHA-256 of no bytes, in hex: the payload hash of a request without a body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// A signer for `service` (S3 by default) in `region`.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// One request as it is signed. `path` is as sent (already URI-encoded, slashes kept); `query` is decoded
    /// name/value pairs; `headers` are the ones to sign and must include `host`.
    public struct Request: Sendable {
        /// `GET`, `PUT`, …
        public var method: String
        /// The encoded path, e.g. `/bucket/key%24name`.
        public var path: String
        /// Query parameters, not encoded; a parameter without a value has an empty one.
        public var query: [(name: String, value: String)]
        /// Headers to sign (names in any case); `host` among them.
        public var headers: [(name: String, value: String)]
        /// The hex SHA-256 of the body.
        public var payloadHash: String

        /// A request to sign.
        public init(method: String, path: String, query: [(name: String, value: String)] = [],
                    headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// The headers to add to `request` at `date`: `x-amz-date`, `x-amz-content-sha256` and `authorization`. The first
    /// two are signed along with the request's own headers.
    public func sign(_ request: Request, at date: Date) -> [(name: String, value: String)] {
        let stamp = Self.timestamp(date)
        var signed = request
        signed.headers += [("x-amz-content-sha256", request.payloadHash), ("x-amz-date", stamp)]
        return [("x-amz-date", stamp), ("x-amz-content-sha256", request.payloadHash),
                ("authorization", authorization(signed, timestamp: stamp))]
    }

    /// The `Authorization` header's value for a request whose headers already hold `x-amz-date` (= `timestamp`) and
    /// `x-amz-content-sha256`.
    public func authorization(_ request: Request, timestamp: String) -> String {
        let day = String(timestamp.prefix(8))
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign(request, timestamp: timestamp).utf8),
                                                                   using: signingKey(day: day)))
        return "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(day: day)),"
            + "SignedHeaders=\(Self.canonicalHeaders(request.headers).names),Signature=\(signature)"
    }

    /// The canonical request: method, path, sorted encoded query, sorted lower-cased trimmed headers, their names,
    /// the payload hash, one per line.
    public func canonicalRequest(_ request: Request) -> String {
        let headers = Self.canonicalHeaders(request.headers)
        return [request.method, request.path, Self.canonicalQuery(request.query), headers.block, headers.names,
                request.payloadHash].joined(separator: "\n")
    }

    /// The string to sign: algorithm, timestamp, credential scope and the canonical request's hex SHA-256.
    public func stringToSign(_ request: Request, timestamp: String) -> String {
        let hash = Self.hex(SHA256.hash(data: Data(canonicalRequest(request).utf8)))
        return ["AWS4-HMAC-SHA256", timestamp, scope(day: String(timestamp.prefix(8))), hash].joined(separator: "\n")
    }

    /// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")`.
    public func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    private func scope(day: String) -> String { "\(day)/\(region)/\(service)/aws4_request" }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC.
    public static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ n: Int?) -> String { n.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        return "\(c.year ?? 1970)\(two(c.month))\(two(c.day))T\(two(c.hour))\(two(c.minute))\(two(c.second))Z"
    }

    /// Percent-encodes every byte but the unreserved `A–Z a–z 0–9 - . _ ~` (and `/` when `keepingSlashes`), upper-case
    /// hex, as SigV4 wants it (a space is `%20`, never `+`).
    public static func uriEncode(_ text: String, keepingSlashes: Bool = false) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                encoded.append("/")
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xF)]))
            }
        }
        return encoded
    }

    /// Encoded `name=value` pairs sorted by name, then value, joined by `&`.
    public static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        query.map { (uriEncode($0.name), uriEncode($0.value)) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// The canonical header lines (each ending in a newline) and the `;`-joined signed names.
    private static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (block: String, names: String) {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let squeezed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            merged[name.lowercased(), default: []].append(squeezed)
        }
        let names = merged.keys.sorted()
        let block = names.map { "\($0):\(merged[$0, default: []].joined(separator: ","))\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    /// Lower-case hex of bytes.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = ""
        for byte in bytes {
            text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
            text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xF)]))
        }
        return text
    }
}
