import ArgumentParser

/// The `webimage` command-line tool.
@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Load, inspect, convert and cache images with the WebImage library.",
        subcommands: [DemoCommand.self, GetCommand.self, PrefetchCommand.self, CacheCommand.self, InfoCommand.self, ConvertCommand.self],
        defaultSubcommand: DemoCommand.self
    )
}
