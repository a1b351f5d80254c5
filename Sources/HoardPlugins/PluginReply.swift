/// What a plugin answered to a call: a result (nil for JSON `null`) or an error it reports for the file.
public enum PluginReply<Answer: Decodable> {
    /// The plugin's result.
    case answer(Answer?)
    /// The plugin's own refusal: a problem code and a message for the pack author.
    case failure(Failure)

    /// A refusal's body.
    public struct Failure: Decodable, Sendable {
        /// A problem code (`BAD_FOOTPRINT`); codes Hoard does not know become `PLUGIN_FAILURE`.
        public var code: String
        /// What is wrong and how to fix it.
        public var message: String
    }
}
