import HoardCore
import HoardImport
import Hummingbird

/// The answer to an upload that was a bundle (an archive of zip or Dungeondraft archives): one result per inner
/// archive, in name order, each a report or a refusal. A single pack is still answered with its bare report.
struct BundleUploadResult: Encodable {
    /// One inner archive's result: `report` when it was imported (or found unchanged), else `error` and `problems`.
    struct Member: Encodable {
        /// The inner archive's path inside the bundle.
        var inner: String
        var report: ImportReport?
        var error: Failure?
        var problems: [Problem]?
    }

    /// The first error of a refused inner archive: the shape of the error body's `code` and `message`.
    struct Failure: Encodable {
        var code: String
        var message: String
    }

    var packs: [Member]
}

extension PackRoutes {
    /// Answers a bundle: 201 when one of its packs was imported, 200 when every pack imported was already there (a
    /// refused pack refuses only itself). When every pack was refused, the refusal of the first, with every pack's
    /// problems (their entries prefixed by the inner archive's path).
    func answer(bundle members: [BundleMember], _ context: HoardRequestContext) throws -> Response {
        var packs: [BundleUploadResult.Member] = []
        var refused: [(archive: String, error: ImportError)] = []
        for member in members {
            switch member.outcome {
            case .success(let report):
                recordImport(report, context)
                packs.append(.init(inner: member.archive, report: report))
            case .failure(let error):
                recordRefusal(error, context)
                refused.append((member.archive, error))
                packs.append(.init(
                    inner: member.archive, error: .init(code: error.code.rawValue, message: error.errors.first?.message ?? "refused"),
                    problems: error.problems))
            }
        }
        let reports = packs.compactMap(\.report)
        guard reports.isEmpty, let first = refused.first else {
            return try JSONBody.response(BundleUploadResult(packs: packs), status: reports.contains { $0.outcome == .imported } ? .created : .ok)
        }
        let problems = refused.flatMap { member in
            member.error.problems.map {
                Problem($0.code, $0.message, entry: member.archive + ($0.entry.map { "/" + $0 } ?? ""), severity: $0.severity)
            }
        }
        throw APIError(
            first.error.code.rawValue, Self.status(refusing: first.error.code),
            "every pack of the bundle was refused; \(first.archive): \(first.error.errors.first?.message ?? "refused")", problems: problems)
    }
}
