/// Keys in least-recently-used order with O(1) touch, insert, remove and pop: a dictionary of
/// nodes threaded on a doubly linked list.
package struct LRUList<Key: Hashable, Value> {
    final class Node {
        let key: Key
        var value: Value
        var newer: Node?
        unowned(unsafe) var older: Node?

        init(key: Key, value: Value) {
            self.key = key
            self.value = value
        }
    }

    private(set) var nodes: [Key: Node] = [:]

    /// An empty list.
    package init() {}
    private var oldest: Node?
    private var newest: Node?

    package var count: Int { nodes.count }
    var isEmpty: Bool { nodes.isEmpty }

    /// The value for `key`, marked most recently used.
    package mutating func touch(_ key: Key) -> Value? {
        touchNode(key)?.value
    }

    /// The node for `key`, marked most recently used: its fields read without copying the whole
    /// value (a memory hit reads one field of its entry). The newest node stays where it is.
    mutating func touchNode(_ key: Key) -> Node? {
        guard let node = nodes[key] else { return nil }
        if node !== newest {
            unlink(node)
            append(node)
        }
        return node
    }

    /// The value for `key` without changing the order.
    func peek(_ key: Key) -> Value? { nodes[key]?.value }

    /// Inserts or replaces, most recently used. Returns the value it replaced.
    @discardableResult
    package mutating func set(_ value: Value, for key: Key) -> Value? {
        if let node = nodes[key] {
            let old = node.value
            node.value = value
            unlink(node)
            append(node)
            return old
        }
        let node = Node(key: key, value: value)
        nodes[key] = node
        append(node)
        return nil
    }

    @discardableResult
    package mutating func remove(_ key: Key) -> Value? {
        guard let node = nodes.removeValue(forKey: key) else { return nil }
        unlink(node)
        return node.value
    }

    /// Removes and returns the least recently used entry.
    package mutating func popOldest() -> (key: Key, value: Value)? {
        guard let node = oldest else { return nil }
        nodes.removeValue(forKey: node.key)
        unlink(node)
        return (node.key, node.value)
    }

    mutating func removeAll() {
        nodes.removeAll()
        oldest = nil
        newest = nil
    }

    private mutating func unlink(_ node: Node) {
        if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
        if let newer = node.newer { newer.older = node.older } else { newest = node.older }
        node.newer = nil
        node.older = nil
    }

    private mutating func append(_ node: Node) {
        node.older = newest
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }
}
