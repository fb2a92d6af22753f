import ArgumentParser

/// The `webimage` command-line tool.
@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Inspect, convert and load images with the WebImage library.",
        subcommands: [InfoCommand.self, ConvertCommand.self],
        defaultSubcommand: InfoCommand.self
    )
}
