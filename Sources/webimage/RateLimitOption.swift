import ArgumentParser
import WebImage

/// `--rate-limit N/s` (or `N`): new downloads a second after a burst of 25, as Nuke's rate
/// limiter; 0 turns it off. The default is the library's, 80 a second.
struct RateLimitOption: ExpressibleByArgument, Sendable {
    /// Downloads a second; 0 is no limit.
    let perSecond: Double

    init?(argument: String) {
        let number = argument.hasSuffix("/s") ? String(argument.dropLast(2)) : argument
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        perSecond = value
    }

    /// How `--help` shows the default.
    var defaultValueDescription: String { "\(perSecond.formatted())/s" }

    /// A manager configuration with this limit.
    var configuration: ImageManager.Configuration {
        var configuration = ImageManager.Configuration()
        configuration.rateLimiter = perSecond > 0 ? RateLimiter(rate: perSecond) : nil
        return configuration
    }
}
