import Foundation
import HoardCatalog
import HoardCore
import Logging

// Pictures participants upload into a session.
extension SessionHub {
    /// A picture a participant uploaded into the session: announced to them and the host only, and fetchable by them
    /// and the host only until the table shows it.
    func announceUpload(session id: String, blob: BlobRecord, by participantId: String) async throws {
        try await load(id)
        sessions[id]?.uploads[blob.digest] = participantId
        let event: [String: JSONValue] = [
            "type": .string("upload"), "by": .string(participantId), "digest": .string(blob.digest.description),
            "size": .number(Double(blob.size)), "mediaType": .string(blob.mediaType),
        ]
        try publish(session: id, event, views: [(.only([participantId]), event)])
        try updateVisibleArt(id)
    }

    /// Forgets an upload (deleted by its owner).
    func forgetUpload(session id: String, digest: Digest) throws {
        guard sessions[id]?.uploads.removeValue(forKey: digest) != nil else { return }
        try updateVisibleArt(id)
    }
}
