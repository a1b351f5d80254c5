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
        sessions[id]?.uploads[blob.digest, default: []].insert(participantId)
        let event: [String: JSONValue] = [
            "type": .string("upload"), "by": .string(participantId), "digest": .string(blob.digest.description),
            "size": .number(Double(blob.size)), "mediaType": .string(blob.mediaType),
        ]
        try publish(session: id, event, views: [(.only([participantId]), event)])
        try updateVisibleArt(id)
    }

    /// Forgets an upload: for every uploader (nil: deleted by its owner in the catalog, or the host), or for one
    /// participant who uploaded the same picture after another (the other keeps it).
    func forgetUpload(session id: String, digest: Digest, by participant: String? = nil) throws {
        if let participant {
            guard sessions[id]?.uploads[digest]?.remove(participant) != nil else { return }
            if sessions[id]?.uploads[digest]?.isEmpty == true { sessions[id]?.uploads[digest] = nil }
        } else {
            guard sessions[id]?.uploads.removeValue(forKey: digest) != nil else { return }
        }
        try updateVisibleArt(id)
    }

    /// Whether a participant announced this picture in the session (they uploaded it, maybe after another did).
    func hasUploaded(session id: String, digest: Digest, participant: String) async throws -> Bool {
        try await uploaders(session: id, digest: digest).contains(participant)
    }

    /// The participants who uploaded this picture into the session.
    func uploaders(session id: String, digest: Digest) async throws -> Set<String> {
        try await load(id)
        return sessions[id]?.uploads[digest] ?? []
    }
}
