import HoardCore

extension PluginRegistry {
    /// What `hoard import` and `hoard serve` use: the built-in kinds, `hoard.default`, `hoard.strip-metadata`, and
    /// `hoard.generate-lods` (libvips).
    public static func standard() throws(ProblemMessage) -> PluginRegistry {
        var registry = PluginRegistry.builtIn()
        try registry.register(generator: LODGenerator())
        return registry
    }
}
