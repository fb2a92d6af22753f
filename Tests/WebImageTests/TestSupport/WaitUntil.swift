import Testing

/// Waits (up to 2 s, looking every 5 ms) until `condition` holds, and expects it to hold then.
func waitUntil(_ condition: @autoclosure () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    for _ in 0..<400 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
    #expect(condition(), sourceLocation: sourceLocation)
}
