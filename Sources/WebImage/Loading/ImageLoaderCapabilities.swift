/// What a loader does or needs, declared by the loader itself: the manager reads these instead
/// of recognising its own loaders by type, so a plug-in loader is treated as a built-in one that
/// declares the same.
public struct ImageLoaderCapabilities: OptionSet, Sendable {
    /// The capabilities' bits.
    public let rawValue: Int

    /// Capabilities from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// It reads local bytes (files, `data:` URLs): the manager's rate limiter does not apply.
    public static let local = ImageLoaderCapabilities(rawValue: 1 << 0)
    /// It starts its queued requests newest first: the manager admits its loads in that order.
    public static let startsNewestFirst = ImageLoaderCapabilities(rawValue: 1 << 1)
    /// It applies the request's `responseModifier` itself, before its own checks of the
    /// response. Otherwise the manager applies it to the response the loader returns.
    public static let appliesResponseModifier = ImageLoaderCapabilities(rawValue: 1 << 2)
}

extension ImageLoader {
    /// None: a remote loader, oldest first, whose responses the manager modifies.
    public var capabilities: ImageLoaderCapabilities { [] }
}
