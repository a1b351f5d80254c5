/// What `GET /v1/sessions/{id}` says of a session before its manifest and map: the server encodes it, the client
/// library decodes it.
public struct SessionFields: Sendable, Hashable, Codable {
    /// The session's id.
    public var id: String
    /// Its name.
    public var name: String
    /// The host's name.
    public var host: String
    /// `group` or `private`.
    public var visibility: String?
    /// The digest of the map document as the caller sees it.
    public var mapDigest: Digest
    /// The sequence number of the last event: open the live channel with `since` = this.
    public var seq: Int64
    /// Who is at the table: the connected, and those who left or joined less than ``awaySeconds`` ago (shown away).
    public var participants: [Participant]
    /// Who the caller is at the table.
    public var you: Seat?
    /// The host as the others see them: `host:<token label>`, the display name their table gave (never the label),
    /// and whether they are connected.
    public var hostSeat: Participant?
    /// How long someone who left stays listed (away) before they leave the list, in seconds.
    public var awaySeconds: Int?
    /// The session's dice commitment, and its seed once revealed.
    public var dice: Dice?

    /// A session's fields.
    public init(
        id: String, name: String, host: String, visibility: String?, mapDigest: Digest, seq: Int64, participants: [Participant], you: Seat?,
        dice: Dice? = nil
    ) {
        self.dice = dice
        self.id = id
        self.name = name
        self.host = host
        self.visibility = visibility
        self.mapDigest = mapDigest
        self.seq = seq
        self.participants = participants
        self.you = you
    }

    enum CodingKeys: String, CodingKey { case id, name, host, visibility, mapDigest, seq, participants, you, hostSeat, awaySeconds, dice }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        host = try container.decodeIfPresent(String.self, forKey: .host) ?? ""
        visibility = try container.decodeIfPresent(String.self, forKey: .visibility)
        mapDigest = try container.decode(Digest.self, forKey: .mapDigest)
        seq = try container.decode(Int64.self, forKey: .seq)
        participants = try container.decodeIfPresent([Participant].self, forKey: .participants) ?? []
        you = try container.decodeIfPresent(Seat.self, forKey: .you)
        hostSeat = try container.decodeIfPresent(Participant.self, forKey: .hostSeat)
        awaySeconds = try container.decodeIfPresent(Int.self, forKey: .awaySeconds)
        dice = try container.decodeIfPresent(Dice.self, forKey: .dice)
    }

    /// A session's dice: the SHA-256 of its secret seed, published before the first roll, and the seed once revealed.
    public struct Dice: Sendable, Hashable, Codable {
        /// The seed's SHA-256, 64 lowercase hex digits.
        public var commitment: String
        /// The seed, 64 lowercase hex digits, once revealed (the session ended or its host asked); absent until then.
        public var seed: String?

        /// Dice fields.
        public init(commitment: String, seed: String?) {
            self.commitment = commitment
            self.seed = seed
        }
    }

    /// Someone in a session.
    public struct Participant: Sendable, Hashable, Codable {
        /// The participant's id.
        public var id: String
        /// The name they joined with.
        public var name: String
        /// Whether they have a live channel open (when known); on the wire `connected`, `yes` or `no`.
        public var isConnected: Bool?

        /// A participant.
        public init(id: String, name: String, isConnected: Bool? = nil) {
            self.id = id
            self.name = name
            self.isConnected = isConnected
        }

        enum Keys: String, CodingKey { case id, name, connected }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            id = try container.decode(String.self, forKey: .id)
            name = try container.decode(String.self, forKey: .name)
            if let flag = try? container.decodeIfPresent(Bool.self, forKey: .connected) {
                isConnected = flag
            } else {
                isConnected = (try? container.decodeIfPresent(String.self, forKey: .connected)).flatMap { $0.map { $0 == "yes" } }
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encodeIfPresent(isConnected.map { $0 ? "yes" : "no" }, forKey: .connected)
        }
    }

    /// Who the caller is at the table: a page needs it to know its own tokens and whether to show the host's tools.
    public struct Seat: Sendable, Hashable, Codable {
        /// The caller's participant id.
        public var participantId: String
        /// Whether the caller is the host.
        public var host: Bool
        /// For the host only: the code players join with (the table page shows the link to share).
        public var joinCode: String?

        /// A seat.
        public init(participantId: String, host: Bool, joinCode: String?) {
            self.participantId = participantId
            self.host = host
            self.joinCode = joinCode
        }
    }
}
