import HoardCore
import HoardRepository
import Hummingbird

/// The answer to an upload that was a bundle (an archive of zip or Dungeondraft archives): one result per inner
/// archive, in name order, each a report or a refusal (`archive` absent). A single pack is still answered with its
/// bare report.
struct BundleUploadResult: Encodable {
    var packs: [ImportResult]
}

extension PackRoutes {
    /// Answers a bundle: 201 when one of its packs was imported, 200 when every pack imported was already there (a
    /// refused pack refuses only itself). When every pack was refused, the refusal of the first, with every pack's
    /// problems (their entries prefixed by the inner archive's path).
    func answer(bundle members: [BundleMember], _ context: HoardRequestContext) throws -> Response {
        var packs: [ImportResult] = []
        var refused: [(archive: String, error: ImportError)] = []
        for member in members {
            packs.append(ImportResult(archive: nil, inner: member.archive, member.outcome))
            switch member.outcome {
            case .success(let report): recordImport(report, context)
            case .failure(let error):
                recordRefusal(error, context)
                refused.append((member.archive, error))
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
