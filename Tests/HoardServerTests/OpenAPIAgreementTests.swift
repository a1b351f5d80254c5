import Foundation
import HoardPlugins
import HoardServer
import Testing

/// Proves that the routes the server registers and Schemas/openapi.yaml describe the same operations, and that the
/// document names every error code the server can answer with.
@Suite struct OpenAPIAgreementTests {
    /// The repository root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let schemas = root.appendingPathComponent("Schemas")
    static let documentPath = schemas.appendingPathComponent("openapi.yaml").path
    static let httpMethods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Parses a YAML file with PyYAML (python3 -c …) and returns it as JSON objects.
    static func loadYAML(_ path: String) throws -> Any {
        let outcome = try ChildProcess.run([
            "python3", "-c", "import yaml, json, sys; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", path,
        ])
        guard outcome.status == 0 else {
            throw Failure("cannot parse \(path) with python3 and PyYAML (exit \(outcome.status)): \(outcome.errorText)")
        }
        return try JSONSerialization.jsonObject(with: outcome.output)
    }

    /// The parsed openapi.yaml.
    static func document() throws -> [String: Any] {
        guard let document = try loadYAML(documentPath) as? [String: Any] else { throw Failure("\(documentPath) is not a mapping") }
        return document
    }

    /// Every (METHOD, path) the document describes.
    static func documentedOperations(_ document: [String: Any]) throws -> [Endpoints.Operation] {
        guard let paths = document["paths"] as? [String: Any] else { throw Failure("openapi.yaml has no paths") }
        var operations: [Endpoints.Operation] = []
        for (path, item) in paths {
            guard let item = item as? [String: Any] else { throw Failure("path item \(path) is not a mapping") }
            for method in httpMethods where item[method] != nil {
                operations.append(Endpoints.Operation(method: method.uppercased(), path: path))
            }
        }
        return operations
    }

    /// Every operation the server registers, from a throwaway data directory.
    static func registeredOperations() throws -> [Endpoints.Operation] {
        let directory = NSTemporaryDirectory() + "hoard-openapi-" + UUID().uuidString.lowercased()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try apiOperations(dataDirectory: directory)
    }

    @Test func theDocumentIsOpenAPI31() throws {
        let document = try Self.document()
        let version = try #require(document["openapi"] as? String)
        #expect(version.hasPrefix("3.1"), "openapi: \(version)")
        #expect((document["info"] as? [String: Any])?["title"] != nil)
    }

    @Test func everyRegisteredOperationIsDocumented() throws {
        let registered = try Self.registeredOperations()
        #expect(!registered.isEmpty)
        let documented = Set(try Self.documentedOperations(try Self.document()))
        let undocumented = registered.filter { !documented.contains($0) }.map(\.description).sorted()
        #expect(undocumented.isEmpty, "registered but not in Schemas/openapi.yaml: \(undocumented.joined(separator: ", "))")
    }

    @Test func everyDocumentedOperationIsRegistered() throws {
        let registered = Set(try Self.registeredOperations())
        let documented = try Self.documentedOperations(try Self.document())
        let unserved = documented.filter { !registered.contains($0) }.map(\.description).sorted()
        #expect(unserved.isEmpty, "in Schemas/openapi.yaml but not registered: \(unserved.joined(separator: ", "))")
    }

    @Test func noOperationIsRegisteredTwice() throws {
        let registered = try Self.registeredOperations()
        let counts = Dictionary(grouping: registered, by: { $0 }).filter { $0.value.count > 1 }.keys.map(\.description).sorted()
        #expect(counts.isEmpty, "registered more than once: \(counts.joined(separator: ", "))")
    }

    @Test func documentedPathParametersAreDeclared() throws {
        let document = try Self.document()
        let paths = try #require(document["paths"] as? [String: Any])
        for (path, item) in paths {
            let item = try #require(item as? [String: Any])
            let placeholders = Set(path.split(separator: "/").filter { $0.hasPrefix("{") && $0.hasSuffix("}") }.map { String($0.dropFirst().dropLast()) })
            for method in Self.httpMethods {
                guard let operation = item[method] as? [String: Any] else { continue }
                let parameters = ((item["parameters"] as? [Any]) ?? []) + ((operation["parameters"] as? [Any]) ?? [])
                let declared = Set(parameters.compactMap { parameter -> String? in
                    guard let parameter = Self.resolve(parameter, in: document), parameter["in"] as? String == "path" else { return nil }
                    return parameter["name"] as? String
                })
                #expect(declared == placeholders, "\(method.uppercased()) \(path) declares path parameters \(declared.sorted()), not \(placeholders.sorted())")
            }
        }
    }

    @Test func everyErrorCodeIsDocumented() throws {
        let document = try Self.document()
        var enums: Set<String> = []
        var texts: [String] = []
        var seen: Set<String> = [Self.documentPath]
        Self.collect(document, enums: &enums, texts: &texts)
        // Definitions reused from the other schemas of Schemas/ by $ref count too.
        var pending = Self.externalReferences(in: document)
        while let file = pending.popLast() {
            let path = Self.schemas.appendingPathComponent(file).standardizedFileURL.path
            guard seen.insert(path).inserted, FileManager.default.fileExists(atPath: path) else { continue }
            let loaded: Any = path.hasSuffix(".json")
                ? try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: path)))
                : try Self.loadYAML(path)
            Self.collect(loaded, enums: &enums, texts: &texts)
            pending += Self.externalReferences(in: loaded)
        }
        let prose = texts.joined(separator: "\n")
        let missing = APIError.registry.map(\.code).filter { code in
            !enums.contains(code) && prose.range(of: "\\b\(code)\\b", options: .regularExpression) == nil
        }
        #expect(missing.isEmpty, "error codes not in Schemas/openapi.yaml: \(missing.joined(separator: ", "))")
    }

    /// Statuses answered only to requests that are no operation: 405 (with `Allow`) and 501 for a method no path
    /// is served with, on a served path and on another. The document names them in prose, not as an operation's
    /// response.
    static let statusesOutsideOperations: Set<Int> = [405, 501]

    @Test func everyErrorStatusIsAResponseOfSomeOperation() throws {
        let document = try Self.document()
        let paths = try #require(document["paths"] as? [String: Any])
        var statuses: Set<String> = []
        for case let item as [String: Any] in paths.values {
            for method in Self.httpMethods {
                guard let responses = (item[method] as? [String: Any])?["responses"] as? [String: Any] else { continue }
                statuses.formUnion(responses.keys)
            }
        }
        let expected = APIError.registry.map(\.status).filter { !Self.statusesOutsideOperations.contains($0) }
        let missing = Set(expected.map(String.init)).subtracting(statuses).sorted()
        #expect(missing.isEmpty, "statuses of APIError.registry no operation documents: \(missing.joined(separator: ", "))")
    }

    /// Follows a local `#/components/...` reference, or returns the object itself.
    static func resolve(_ value: Any, in document: [String: Any]) -> [String: Any]? {
        guard let object = value as? [String: Any] else { return nil }
        guard let reference = object["$ref"] as? String, reference.hasPrefix("#/") else { return object }
        var current: Any = document
        for key in reference.dropFirst(2).split(separator: "/") {
            guard let next = (current as? [String: Any])?[String(key)] else { return nil }
            current = next
        }
        return current as? [String: Any]
    }

    /// Every string of every `enum`, and every `description`, `summary` and `title`, anywhere in a JSON value.
    static func collect(_ value: Any, enums: inout Set<String>, texts: inout [String]) {
        if let object = value as? [String: Any] {
            for (key, child) in object {
                if key == "enum", let values = child as? [Any] {
                    enums.formUnion(values.compactMap { $0 as? String })
                } else if ["description", "summary", "title"].contains(key), let text = child as? String {
                    texts.append(text)
                }
                collect(child, enums: &enums, texts: &texts)
            }
        } else if let array = value as? [Any] {
            for child in array { collect(child, enums: &enums, texts: &texts) }
        }
    }

    /// File parts of `$ref`s that point outside the document (`common.schema.json#/$defs/digest` → `common.schema.json`).
    static func externalReferences(in value: Any) -> [String] {
        if let object = value as? [String: Any] {
            var files: [String] = []
            if let reference = object["$ref"] as? String, !reference.hasPrefix("#"), !reference.contains("://") {
                files.append(String(reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]))
            }
            return files + object.values.flatMap { externalReferences(in: $0) }
        }
        if let array = value as? [Any] { return array.flatMap { externalReferences(in: $0) } }
        return []
    }
}
