/// What waits in `PriorityQueues`: anything with a unique id.
protocol QueuedByID {
    /// Unique among the elements waiting in one `PriorityQueues`.
    var id: Int { get }
}

/// Waiting elements (transfers in the loader, works in the manager's admission) by priority:
/// the highest non-empty queue goes first, oldest first (FIFO) or newest first (LIFO). Taking
/// the next one is O(1) amortised whatever the number waiting, and so is removing one by id (a
/// cancelled call): its slot is emptied, not shifted out, so cancelling 10,000 queued transfers
/// costs 10,000 steps, not 50 million. Moving one to another level (its priority rose or fell)
/// is a removal and an append.
struct PriorityQueues<Element: QueuedByID> {
    /// Per level: the elements in order, nil where one was removed.
    private var queues: [[Element?]] = [[], [], []]
    /// Per level: the first slot still to look at.
    private var heads = [0, 0, 0]
    /// Per level: how many slots were dropped from the front (slot numbers stay valid).
    private var bases = [0, 0, 0]
    /// Where each waiting element is: its level and its slot number.
    private var slots: [Int: (level: Int, slot: Int)] = [:]
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element, level: Int) {
        queues[level].append(element)
        slots[element.id] = (level, bases[level] + queues[level].count - 1)
        count += 1
    }

    /// The element `next(lifo:)` would take, left in place.
    func peek(lifo: Bool) -> Element? {
        for level in stride(from: 2, through: 0, by: -1) where queues[level].count > heads[level] {
            let waiting = queues[level][heads[level]...]
            if let element = (lifo ? waiting.last { $0 != nil } : waiting.first { $0 != nil }) ?? nil { return element }
        }
        return nil
    }

    mutating func next(lifo: Bool) -> Element? {
        for level in stride(from: 2, through: 0, by: -1) {
            while queues[level].count > heads[level] {
                let taken: Element?
                if lifo {
                    taken = queues[level].removeLast()
                } else {
                    // The slot is emptied, not only passed: a taken element must not stay
                    // referenced until the next compaction (a started work's entry held its
                    // finished work and decoded image: 100 bitmaps, 5 GB, in 20 s).
                    taken = queues[level][heads[level]].take()
                    heads[level] += 1
                    compact(level)
                }
                guard let element = taken else { continue }   // a removed one's slot
                slots.removeValue(forKey: element.id)
                count -= 1
                return element
            }
        }
        return nil
    }

    /// Drops the consumed front of a level once it is most of the array.
    private mutating func compact(_ level: Int) {
        if heads[level] == queues[level].count {
            bases[level] += queues[level].count
            queues[level].removeAll(keepingCapacity: true)
            heads[level] = 0
        } else if heads[level] > 64 && heads[level] * 2 > queues[level].count {
            bases[level] += heads[level]
            queues[level].removeFirst(heads[level])
            heads[level] = 0
        }
    }

    /// Moves a waiting element to the back of `level`; an element no longer waiting is left alone.
    mutating func move(id: Int, toLevel level: Int) {
        guard let current = slots[id], current.level != level, let element = remove(id: id) else { return }
        append(element, level: level)
    }

    /// The level a waiting element is in (for tests).
    func level(of id: Int) -> Int? { slots[id]?.level }

    mutating func remove(id: Int) -> Element? {
        guard let (level, slot) = slots.removeValue(forKey: id) else { return nil }
        let index = slot - bases[level]
        guard index >= 0, index < queues[level].count, let element = queues[level][index] else { return nil }
        queues[level][index] = nil
        count -= 1
        // Trailing empty slots go at once (LIFO takes from the end).
        while let last = queues[level].last, last == nil, queues[level].count > heads[level] { queues[level].removeLast() }
        return element
    }
}
