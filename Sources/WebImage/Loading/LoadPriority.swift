import Synchronization

/// The priority of a request that can change while it waits (Nuke's `ImageTask.priority`
/// setter). The manager raises it when a caller with a higher priority joins a load in flight
/// and lowers it again when that caller leaves; a caller can change it through
/// `ImageContext.priority`.
///
/// A loader that queues requests watches it with `onChange(_:)` and moves a waiting request to
/// its new place (the HTTP loader does); a transfer already running is not affected.
public final class LoadPriority: Sendable {
    private typealias Observer = @Sendable (LoadPriority) -> Void
    private struct State {
        var value: ImageLoaderPriority
        /// The first observer, inline: most handles have one (a load's work or transfer), and
        /// an array would be one more allocation per handle (three per load).
        var first: Observer?
        var more: [Observer] = []

        mutating func append(_ observer: @escaping Observer) {
            if first == nil { first = observer } else { more.append(observer) }
        }
    }
    private let state: Mutex<State>

    /// A priority starting at `value`.
    public init(_ value: ImageLoaderPriority = .normal) { state = Mutex(State(value: value)) }

    /// The current priority. Setting a different value tells every observer, outside the lock.
    public var value: ImageLoaderPriority {
        get { state.withLock { $0.value } }
        set { if store(newValue) { notify() } }
    }

    /// Calls `observer` after each change from now on, on the thread that made the change (keep
    /// it short). The observer reads `value` itself, under whatever lock orders its own changes:
    /// when changes race, the last observer call then sees the final value. The handle keeps its
    /// observers: an observer that uses the handle captures it weakly.
    public func onChange(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.append { _ in observer() } }
    }

    /// `onChange(_:)` for an observer that reads the handle: it is passed in, so the observer
    /// need not capture it weakly (a weak reference gives an object a side table, and every
    /// retain and release of it then takes the runtime's slow path).
    func observe(_ observer: @escaping @Sendable (LoadPriority) -> Void) {
        state.withLock { $0.append(observer) }
    }

    /// Sets the value without telling anyone; true when it changed (call `notify()` after
    /// releasing any lock held).
    @discardableResult
    func store(_ value: ImageLoaderPriority) -> Bool {
        state.withLock { state in
            guard state.value != value else { return false }
            state.value = value
            return true
        }
    }

    /// Tells every observer that the value changed.
    func notify() {
        let (first, more) = state.withLock { ($0.first, $0.more) }
        first?(self)
        for observer in more { observer(self) }
    }
}
