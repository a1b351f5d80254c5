/// What a Hoard server says about itself in its DNS-SD record: the service `_hoard._tcp` and a TXT record.
///
/// The TXT record holds `api=` (the HTTP API's major version), `id=` (the server's instance id, the same on every
/// address and interface it is found on), `tls=` (`1` when it serves HTTPS, else `0`) and `name=` (its name for
/// people). Keys are read without regard to case, unknown keys are ignored (RFC 6763 §6).
public struct ServerRecord: Sendable, Equatable {
    /// The DNS-SD service type Hoard registers and browses.
    public static let serviceType = "_hoard._tcp"
    /// The API version this build speaks.
    public static let currentAPIVersion = 1

    /// The HTTP API's major version.
    public var apiVersion: Int
    /// The server's instance id.
    public var instance: String
    /// Whether it serves HTTPS.
    public var isTLS: Bool
    /// Its name for people.
    public var name: String

    /// A record with every field given.
    public init(apiVersion: Int = ServerRecord.currentAPIVersion, instance: String, isTLS: Bool, name: String) {
        self.apiVersion = apiVersion
        self.instance = instance
        self.isTLS = isTLS
        self.name = name
    }

    /// The TXT record's bytes: each `key=value` string after its length byte (values cut, between characters, to fit
    /// 255 bytes).
    public var txtRecord: [UInt8] {
        var bytes: [UInt8] = []
        for (key, value) in [("api", String(apiVersion)), ("id", instance), ("tls", isTLS ? "1" : "0"), ("name", name)] {
            var entry = Array("\(key)=".utf8)
            for character in value {
                let encoded = Array(String(character).utf8)
                guard entry.count + encoded.count <= 255 else { break }
                entry += encoded
            }
            bytes.append(UInt8(entry.count))
            bytes += entry
        }
        return bytes
    }

    /// The pairs of a TXT record (a key without `=` has an empty value); nil when a length runs past the end.
    public static func pairs(txt: [UInt8]) -> [String: String]? {
        var pairs: [String: String] = [:]
        var at = 0
        while at < txt.count {
            let length = Int(txt[at])
            guard at + 1 + length <= txt.count else { return nil }
            let entry = txt[(at + 1)..<(at + 1 + length)]
            at += 1 + length
            guard !entry.isEmpty else { continue }
            let key: ArraySlice<UInt8>
            let value: ArraySlice<UInt8>
            if let equals = entry.firstIndex(of: UInt8(ascii: "=")) {
                key = entry[..<equals]
                value = entry[(equals + 1)...]
            } else {
                key = entry
                value = []
            }
            let name = String(decoding: key, as: UTF8.self).lowercased()
            if pairs[name] == nil { pairs[name] = String(decoding: value, as: UTF8.self) }
        }
        return pairs
    }

    /// The record a TXT record holds; nil when it is not a Hoard server's (no `api=` number or no `id=`).
    public init?(txt: [UInt8]) {
        guard let pairs = Self.pairs(txt: txt) else { return nil }
        self.init(pairs: pairs)
    }

    /// The record a TXT record's pairs hold (keys in any case, as `NWTXTRecord.dictionary` gives them); nil when it is
    /// not a Hoard server's (no `api=` number or no `id=`).
    public init?(pairs: [String: String]) {
        let pairs = Dictionary(pairs.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        guard let api = pairs["api"].flatMap({ Int($0) }), let instance = pairs["id"], !instance.isEmpty else { return nil }
        self.init(apiVersion: api, instance: instance, isTLS: pairs["tls"] == "1", name: pairs["name"] ?? "")
    }
}
