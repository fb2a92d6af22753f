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
/// puts it where its arrival places it among that level's elements (Nuke's and
/// `OperationQueue`'s rule: a load raised to normal goes before the normal ones queued after
/// it): a removal and an insertion, linear in the level's length (priorities change rarely).
struct PriorityQueues<Element: QueuedByID> {
    /// Per level: the elements in arrival order with their arrival numbers, nil where one was removed.
    private var queues: [[(element: Element, arrival: Int)?]] = [[], [], []]
    /// The next arrival number.
    private var arrivals = 0
    /// Per level: the first slot still to look at.
    private var heads = [0, 0, 0]
    /// Per level: how many slots were dropped from the front (slot numbers stay valid).
    private var bases = [0, 0, 0]
    /// Where each waiting element is: its level and its slot number.
    private var slots: [Int: (level: Int, slot: Int)] = [:]
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element, level: Int) {
        arrivals += 1
        queues[level].append((element, arrivals))
        slots[element.id] = (level, bases[level] + queues[level].count - 1)
        count += 1
    }

    /// The element `next(lifo:)` would take, left in place.
    func peek(lifo: Bool) -> Element? {
        for level in stride(from: 2, through: 0, by: -1) where queues[level].count > heads[level] {
            let waiting = queues[level][heads[level]...]
            if let entry = (lifo ? waiting.last { $0 != nil } : waiting.first { $0 != nil }) ?? nil { return entry.element }
        }
        return nil
    }

    mutating func next(lifo: Bool) -> Element? {
        for level in stride(from: 2, through: 0, by: -1) {
            while queues[level].count > heads[level] {
                let taken: (element: Element, arrival: Int)?
                if lifo {
                    taken = queues[level].removeLast()
                } else {
                    // The slot is emptied, not only passed: a taken element must not stay
                    // referenced until the next compaction (a started work's entry held its
                    // finished work and decoded image).
                    taken = queues[level][heads[level]].take()
                    heads[level] += 1
                    compact(level)
                }
                guard let element = taken?.element else { continue }   // a removed one's slot
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

    /// Moves a waiting element to `level`, in its place by arrival; an element no longer
    /// waiting is left alone.
    mutating func move(id: Int, toLevel level: Int) {
        guard let current = slots[id], current.level != level, let entry = removeEntry(id: id) else { return }
        var queue = queues[level]
        queues[level] = []   // unique: inserted in place
        // Before the oldest of the newer elements at the back (removed slots are passed over).
        var index = queue.count, probe = queue.count
        while probe > heads[level] {
            if let before = queue[probe - 1] {
                if before.arrival < entry.arrival { break }
                index = probe - 1
            }
            probe -= 1
        }
        queue.insert(entry, at: index)
        for position in index..<queue.count {
            if let shifted = queue[position] { slots[shifted.element.id] = (level, bases[level] + position) }
        }
        queues[level] = queue
        count += 1
    }

    /// The level a waiting element is in (for tests).
    func level(of id: Int) -> Int? { slots[id]?.level }

    mutating func remove(id: Int) -> Element? { removeEntry(id: id)?.element }

    private mutating func removeEntry(id: Int) -> (element: Element, arrival: Int)? {
        guard let (level, slot) = slots.removeValue(forKey: id) else { return nil }
        let index = slot - bases[level]
        guard index >= 0, index < queues[level].count, let entry = queues[level][index] else { return nil }
        queues[level][index] = nil
        count -= 1
        // Trailing empty slots go at once (LIFO takes from the end).
        while let last = queues[level].last, last == nil, queues[level].count > heads[level] { queues[level].removeLast() }
        return entry
    }
}
