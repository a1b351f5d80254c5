#if canImport(Network)
import Foundation
import Network

extension ServerBrowser {
    /// What an `NWBrowser` has reported so far, filled on its queue and read once it is cancelled.
    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var results: Set<NWBrowser.Result> = []
        private var failure: NWError?
        private var waiting: NWError?
        let finished = DispatchSemaphore(value: 0)

        func update(_ results: Set<NWBrowser.Result>) { lock.withLock { self.results = results } }

        func update(_ state: NWBrowser.State) {
            switch state {
            case .failed(let error):
                lock.withLock { failure = error }
                finished.signal()
            case .waiting(let error): lock.withLock { waiting = error }
            case .ready: lock.withLock { waiting = nil }
            default: break
            }
        }

        /// The results, or why there are none: a failure, or a wait (no network, or no permission to browse it) that
        /// never ended.
        func outcome() -> (results: Set<NWBrowser.Result>, error: NWError?) {
            lock.withLock { (results, failure ?? (results.isEmpty ? waiting : nil)) }
        }
    }

    /// The `_hoard._tcp` instances `NWBrowser` reports within `seconds`, with the TXT records it brings
    /// (`.bonjourWithTXTRecord`). An app needs `NSLocalNetworkUsageDescription` and `_hoard._tcp` in `NSBonjourServices`
    /// in its Info.plist; without them the browser waits, and this throws the reason.
    static func services(browsingWithNetwork seconds: Double) throws(DiscoveryError) -> [Service] {
        let collected = Collected()
        let browser = NWBrowser(for: .bonjourWithTXTRecord(type: ServerRecord.serviceType, domain: nil), using: NWParameters())
        browser.browseResultsChangedHandler = { results, _ in collected.update(results) }
        browser.stateUpdateHandler = { state in collected.update(state) }
        browser.start(queue: DispatchQueue(label: "hoard-nwbrowser"))
        _ = collected.finished.wait(timeout: .now() + .milliseconds(Int(seconds * 1000)))
        browser.cancel()
        let (results, error) = collected.outcome()
        if let error { throw DiscoveryError(error, doing: "browsing \(ServerRecord.serviceType)") }
        return results.compactMap { result -> Service? in
            guard case .service(let name, _, let domain, let interface) = result.endpoint else { return nil }
            var record: ServerRecord?
            if case .bonjour(let txt) = result.metadata { record = ServerRecord(pairs: txt.dictionary) }
            let index = interface?.index ?? result.interfaces.first?.index ?? 0
            return Service(name: name, domain: domain, interface: UInt32(index), record: record)
        }
    }
}

extension DiscoveryError {
    /// An error from Network.framework: its DNS-SD code when it has one (`kDNSServiceErr_PolicyDenied` when the app may
    /// not use the local network), else `kDNSServiceErr_Unknown`.
    init(_ error: NWError, doing what: String) {
        if case .dns(let code) = error {
            self.init(code: code, doing: what)
        } else {
            self.init(code: -65537, doing: "\(what) (\(error))")
        }
    }
}
#endif
