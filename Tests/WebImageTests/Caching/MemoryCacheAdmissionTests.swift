import Testing
@testable import WebImage

/// `MemoryCache.Configuration.minimumUses`: a key's image is kept from its Nth store on, so
/// that images made once never take the cache's room.
@Suite struct MemoryCacheAdmissionTests {
    func image(_ side: Int = 10) -> Image { Image(bitmap: Fixtures.gradient(width: side, height: side)) }

    @Test func aKeyIsKeptFromItsSecondStore() {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 30, usesWeakCache: false, minimumUses: 2))
        cache.setImage(image(), forKey: "a")
        cache.setImage(image(), forKey: "b")
        #expect(cache.image(forKey: "a") == nil && cache.image(forKey: "b") == nil)
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.setImage(image(), forKey: "a")
        #expect(cache.image(forKey: "a") != nil, "the second store is kept")
        #expect(cache.image(forKey: "b") == nil)
        #expect(cache.count == 1 && cache.totalCost == image().memoryCost)
    }

    @Test func threeUsesNeedThreeStores() {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 30, usesWeakCache: false, minimumUses: 3))
        cache.setImage(image(), forKey: "a")
        cache.setImage(image(), forKey: "a")
        #expect(!cache.contains("a"))
        cache.setImage(image(), forKey: "a")
        #expect(cache.contains("a"))
    }

    /// A key held already is replaced at once: its new image is not refused while counted.
    @Test func aHeldKeyIsReplacedAtOnce() {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 30, maxEntryFraction: 1, usesWeakCache: false, minimumUses: 2))
        cache.setImage(image(), forKey: "a", cost: 100)
        cache.setImage(image(), forKey: "a", cost: 100)
        cache.setImage(image(), forKey: "a", cost: 250)
        #expect(cache.totalCost == 250 && cache.count == 1)
    }

    /// An evicted image still held elsewhere (in the weak table) is kept again on its next store.
    @Test func aKeyInTheWeakTableIsKeptAtOnce() {
        let cache = MemoryCache(configuration: .init(costLimit: 1000, maxEntryFraction: 1, usesWeakCache: true, minimumUses: 2))
        let held = image()
        cache.setImage(held, forKey: "a", cost: 600)
        cache.setImage(held, forKey: "a", cost: 600)
        cache.setImage(image(), forKey: "b", cost: 600)
        cache.setImage(image(), forKey: "b", cost: 600)   // evicts a, which `held` keeps alive
        #expect(cache.count == 1 && cache.weakEntryCount == 1)
        cache.setImage(held, forKey: "a", cost: 600)
        #expect(cache.contains("a") && cache.count == 1)
        withExtendedLifetime(held) {}
    }

    /// The keys not yet kept are remembered, the last `window` of them: one pushed out starts
    /// its count again.
    @Test func theCountOfAForgottenKeyStartsAgain() {
        var admission = MemoryCacheAdmission(minimumUses: 2, window: 3)
        var first: [Bool] = []
        for key in ["a", "b", "c", "d"] { first.append(admission.admits(key)) }
        #expect(first == [false, false, false, false])
        let a = admission.admits("a"), d = admission.admits("d"), c = admission.admits("c")
        #expect(!a, "a was pushed out by d")
        #expect(d && c)
        // One use is every use: nothing is counted.
        var every = MemoryCacheAdmission(minimumUses: 1)
        let once = every.admits("a"), twice = every.admits("a")
        #expect(once && twice)
    }

    /// Changing `minimumUses` counts from nothing under the new rule; held entries stay.
    @Test func aNewRuleStartsItsCount() {
        let cache = MemoryCache(configuration: .init(costLimit: 1 << 30, usesWeakCache: false, minimumUses: 1))
        cache.setImage(image(), forKey: "a")
        cache.setConfiguration(.init(costLimit: 1 << 30, usesWeakCache: false, minimumUses: 2))
        #expect(cache.contains("a"))
        cache.setImage(image(), forKey: "b")
        #expect(!cache.contains("b"))
        cache.setImage(image(), forKey: "b")
        #expect(cache.contains("b"))
    }
}
