import Foundation
@testable import WebImage

/// Pillow's own test images (bmpsuite, its icons and TIFFs), unpacked by scripts/install-deps.sh
/// from the Pillow source archive on PyPI, and what Pillow (the plug-in environment's) reads in
/// each: the independent reference of the BMP, ICO and TIFF decoders.
enum PillowSuite {
    /// `$WEBIMAGE_PILLOW_SUITE_DIR`, else where install-deps.sh unpacks it.
    static let directory = URL(fileURLWithPath: ProcessInfo.processInfo.environment["WEBIMAGE_PILLOW_SUITE_DIR"] ?? "/opt/webimage-pillow-suite")

    /// The files under `subfolder` whose names end in one of `extensions`, sorted.
    static func files(_ subfolder: String = "", extensions: [String]) throws -> [URL] {
        let folder = subfolder.isEmpty ? directory : directory.appendingPathComponent(subfolder)
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent(".complete").path) else {
            throw ImageError.transformFailed("Pillow's test images are not at \(directory.path): run WEBIMAGE_TEST_TOOLS=1 scripts/install-deps.sh")
        }
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { extensions.contains($0.pathExtension.lowercased()) }
            .sorted { $0.path < $1.path }
    }

    /// What Pillow reads in each of `files`: width, height, mode and the RGBA SHA-256 of its
    /// first image (written as RGBA PNG to `renders/<index>.png` when `renders` is given), or
    /// nil when Pillow refuses the file.
    static func read(_ files: [URL], renders: URL? = nil) throws -> [String: (width: Int, height: Int, sha256: String, mode: String)?] {
        let script = """
        import hashlib, json, os, sys, warnings
        warnings.simplefilter("ignore")
        from PIL import Image
        renders = sys.argv[1]
        out = {}
        for index, path in enumerate(sys.argv[2:]):
            try:
                im = Image.open(path)
                im.load()
                rgba = im.convert("RGBA")
                if renders:
                    rgba.save(os.path.join(renders, "%d.png" % index))
                out[path] = [im.size[0], im.size[1], hashlib.sha256(rgba.tobytes()).hexdigest(), im.mode]
            except Exception:
                out[path] = None
        print(json.dumps(out))
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PillowPlugIns.python)
        process.arguments = ["-c", script, renders?.path ?? ""] + files.map(\.path)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let object = try JSONSerialization.jsonObject(with: text) as! [String: Any]
        return object.mapValues { value in
            guard let array = value as? [Any], array.count == 4 else { return nil }
            return (array[0] as! Int, array[1] as! Int, array[2] as! String, array[3] as! String)
        }
    }
}
