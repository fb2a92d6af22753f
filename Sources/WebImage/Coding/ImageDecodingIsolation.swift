import Foundation

/// Somewhere else for a registry's decodes to run: a decoder that may crash, never return or
/// take gigabytes on a stranger's bytes then harms only itself (WebImageIsolation's
/// `DecodingWorkerPool` runs them in sandboxed worker processes).
///
/// Set on an `ImageCoders` registry (`ImageCoders.isolation`), it takes every asynchronous
/// decode of that registry: the manager's decodes of downloaded bytes and the cache's decodes
/// of disk hits. Progressive previews are turned off (no incremental decoder is made), and the
/// synchronous `ImageCoders.decode(_:options:context:)` still decodes in the process, for code
/// that decodes its own files.
public protocol ImageDecodingIsolation: Sendable {
    /// Decodes `data` elsewhere and returns every frame in memory (an animation preloaded, or
    /// its first frame alone when `options.firstFrameOnly`).
    /// - Throws: the decoder's `ImageError` (`undecodable`, `tooLarge`, `unsupportedFormat`,
    ///   `emptyData`), `ImageError.undecodable` when the decoder crashed or went over its memory
    ///   limit, `ImageError.decodeTimedOut` past its time limit, `CancellationError` when the
    ///   calling task is cancelled (the decode is stopped at once).
    func decode(_ data: Data, options: ImageDecodingOptions) async throws -> Image
}
