import ArgumentParser
import Foundation
import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageIsolation
import WebImageJXL
import WebImageSVG
import WebImageTIFF
import WebImagePDF

/// The `webimage` command-line tool.
@main
struct WebImageCommand: AsyncParsableCommand {
    /// The tool's version, printed by `webimage --version`.
    static let version = "webimage 0.12.0"

    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Load, inspect, convert and cache images with the WebImage library.",
        discussion: """
            Exit status: 0 on success, 1 when something failed at run time (a download, a decode, a \
            write), 2 for a usage error, 130/143/129 when stopped by SIGINT/SIGTERM/SIGHUP.
            """,
        version: version,
        subcommands: [DemoCommand.self, GetCommand.self, PrefetchCommand.self, CacheCommand.self, InfoCommand.self, ConvertCommand.self,
                      ServeCommand.self],
        defaultSubcommand: DemoCommand.self
    )

    /// The exit status of a usage error (ArgumentParser's own is 64, EX_USAGE).
    static let usageStatus: Int32 = 2

    /// Parses and runs the command. Usage errors exit 2 with the usage text; an unknown
    /// subcommand is named as such rather than taken as an argument of the default one.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        rejectUnknownCommand(arguments)
        registerCoderPlugIns()
        // A decoding worker of `webimage serve` (or of another process's pool) never returns.
        DecodingWorker.runIfRequested()
        do {
            var parsed = try parseAsRoot(arguments)
            if var asyncCommand = parsed as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try parsed.run()
            }
        } catch {
            finish(with: error)
        }
    }

    /// Every command reads and writes today's formats too: the AVIF, HEIF and JPEG XL coder
    /// plug-ins, and reads SVG (librsvg), TIFF (libtiff) and PDF pages (poppler).
    static func registerCoderPlugIns() {
        AVIFCoder.register()
        HEIFCoder.register()
        JXLCoder.register()
        SVGCoder.register()
        TIFFCoder.register()
        PDFCoder.register()
    }

    /// Exits 2 when the first argument is neither an option nor a command's name.
    private static func rejectUnknownCommand(_ arguments: [String]) {
        let names = commandNames
        guard let first = arguments.first, !first.hasPrefix("-"), !names.contains(first), first != "help" else { return }
        Terminal.error("unknown command '\(first)'; the commands are \(names.joined(separator: ", ")) (see webimage --help)")
        Foundation.exit(usageStatus)
    }

    /// The subcommands' names, as ArgumentParser knows them.
    static var commandNames: [String] {
        configuration.subcommands.map { $0.configuration.commandName ?? String(describing: $0).lowercased() }
    }

    /// Prints `error` as ArgumentParser does and exits; a usage error exits 2.
    private static func finish(with error: any Error) -> Never {
        if exitCode(for: error) == .validationFailure {
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(usageStatus)
        }
        exit(withError: error)
    }
}
