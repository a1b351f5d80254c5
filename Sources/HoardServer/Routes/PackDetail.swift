import HoardCatalog
import HoardCore

/// `GET /v1/packs/{name}`: the pack's summary, its current version's licence, readme and credits files, and who made
/// it under which licence (`pack.json` `author` and `license`, from the manifest), and the generated pictures of its
/// assets that could not be made (`renditionProblems`, when any failed for good).
struct PackDetail: Encodable {
    var summary: PackSummary
    var documents: [PackDocument]
    var author: String?
    var license: String?
    var renditionProblems: [JobProblem] = []

    enum Keys: String, CodingKey { case documents, author, license, renditionProblems }

    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(documents, forKey: .documents)
        try container.encodeIfPresent(author, forKey: .author)
        try container.encodeIfPresent(license, forKey: .license)
        if !renditionProblems.isEmpty { try container.encode(renditionProblems, forKey: .renditionProblems) }
    }
}
