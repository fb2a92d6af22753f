import Foundation
@testable import WebImage

/// Pillow with its AVIF, HEIF and JPEG XL plug-ins (pillow-avif-plugin, pillow-heif,
/// pillow-jxl-plugin from PyPI, in the virtual environment scripts/install-deps.sh makes): the
/// independent readers of what our encoders write.
enum PillowPlugIns {
    /// `$WEBIMAGE_PILLOW_PLUGINS` (a python), else the environment install-deps.sh makes.
    static let python = ProcessInfo.processInfo.environment["WEBIMAGE_PILLOW_PLUGINS"] ?? "/opt/webimage-pillow-plugins/bin/python"

    /// What Pillow sees in each file of `folder`: size, frame count, per-frame durations (ms),
    /// frame 0's RGBA SHA-256, and frame 0 written as `<name>.frame0.png` beside it.
    static func read(folder: URL) throws -> [String: [String: Any]] {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ImageError.transformFailed("no Pillow with its AVIF/HEIF/JXL plug-ins at \(python): run scripts/install-deps.sh")
        }
        let script = """
        import hashlib, json, os, sys
        import pillow_avif, pillow_jxl
        from pillow_heif import register_heif_opener
        register_heif_opener()
        from PIL import Image
        out = {}
        folder = sys.argv[1]
        for name in sorted(os.listdir(folder)):
            if name.endswith(".png"):
                continue
            im = Image.open(os.path.join(folder, name))
            durations = []
            for i in range(getattr(im, "n_frames", 1)):
                im.seek(i)
                im.load()
                durations.append(im.info.get("duration", 0))
            im.seek(0)
            rgba = im.convert("RGBA")
            rgba.save(os.path.join(folder, name + ".frame0.png"))
            out[name] = {"size": list(im.size), "frames": getattr(im, "n_frames", 1), "durations": durations,
                         "frame0": hashlib.sha256(rgba.tobytes()).hexdigest()}
        print(json.dumps(out))
        """
        return try json(script, arguments: [folder.path])
    }

    /// Runs `script` with this python and `arguments`, and returns the JSON object of objects
    /// it prints.
    static func json(_ script: String, arguments: [String]) throws -> [String: [String: Any]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let result = try JSONSerialization.jsonObject(with: text) as? [String: [String: Any]] else {
            throw ImageError.transformFailed("Pillow failed: \(String(decoding: errorText, as: UTF8.self))")
        }
        return result
    }
}
