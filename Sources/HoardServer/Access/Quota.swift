import HoardCatalog

extension CatalogBackend {
    /// Refuses with 507 QUOTA_EXCEEDED when adding `bytes` would take the named group past its quota; nothing
    /// when the group has none (or does not exist yet). `what` names the upload in the message.
    func requireQuota(group name: String, adding bytes: Int64, for what: String) throws {
        guard let group = try group(named: name), let quota = group.quotaBytes, let id = group.id else { return }
        let used = try usage(groupId: id)
        if used + bytes > quota {
            throw APIError.quotaExceeded("group '\(name)' holds \(used) of its \(quota) bytes; \(what) needs \(bytes) more")
        }
    }
}
