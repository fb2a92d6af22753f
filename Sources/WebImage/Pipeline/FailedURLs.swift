import Foundation
import Synchronization

/// The failed-URL blacklist. A lock, not an actor: it is read on every call, memory hits
/// included; an atomic count lets the usual empty case skip the lock.
final class FailedURLs: Sendable {
    private let urls = Mutex(Set<URL>())
    private let count = Atomic<Int>(0)

    func contains(_ url: URL) -> Bool {
        guard count.load(ordering: .acquiring) > 0 else { return false }
        return urls.withLock { $0.contains(url) }
    }

    func insert(_ url: URL) {
        urls.withLock {
            $0.insert(url)
            count.store($0.count, ordering: .releasing)
        }
    }

    func remove(_ url: URL) {
        guard count.load(ordering: .acquiring) > 0 else { return }
        urls.withLock {
            $0.remove(url)
            count.store($0.count, ordering: .releasing)
        }
    }

    func removeAll() {
        urls.withLock {
            $0.removeAll()
            count.store(0, ordering: .releasing)
        }
    }
}

extension ImageManager {
    /// The built-in blacklist rule (SDWebImage's): a failure that will happen again for this URL
    /// (not found or gone and other client errors, undecodable or unsupported data, a bad
    /// content type, an image or response over the limits, an invalid URL, an address or a
    /// redirect the loader's policy refuses) blacklists it; a
    /// cancellation, timeout, connection problem, server error (5xx), 408 or 429, a refused
    /// request, a failed transform or cache write does not.
    public static func isPermanentFailure(_ error: any Error) -> Bool {
        guard let error = error as? ImageError else { return false }
        switch error {
        case .decodingFailed(let reason, _, _):
            return isPermanentFailure(reason)
        case .badStatusCode(let code, _):
            return (400..<500).contains(code) && code != 408 && code != 429
        case .emptyData, .unsupportedFormat, .undecodable, .tooLarge, .animationTooLarge, .invalidContentType, .responseTooLarge, .invalidURL, .addressNotAllowed, .redirectNotAllowed:
            return true
        default:
            return false
        }
    }
}
