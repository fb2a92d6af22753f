import Foundation

/// An anchor library (Pillow, pyvips) in a Python process of its own that stays up for the
/// whole run, so that each round can time its version of a row right beside ours (interleaved
/// rounds): its script loads the fixtures once, then for each row name written to it runs that
/// row's statement once and writes back the milliseconds it took (measured inside Python: no
/// process start counted).
final class PythonWorker {
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    private var pending = Data()

    /// Pillow's rows: the statements of ../shared/bench/anchors.sh.
    static let pillow = #"""
import sys, time
from PIL import Image, ImageFilter
fx = sys.argv[1]
big = Image.open(fx + "/rgba-4000x3000.png"); big.load()
medium = Image.open(fx + "/rgba-1024x768.png"); medium.load()
jpeg = fx + "/photo-4000x3000.jpg"
def thumbnail():
    im = Image.open(jpeg); im.draft("RGB", (256, 192)); im.thumbnail((256, 256), Image.LANCZOS)
rows = {
    "resize": lambda: big.resize((256, 192), Image.LANCZOS),
    "blur": lambda: medium.filter(ImageFilter.GaussianBlur(8)),
    "rotate": lambda: medium.rotate(30, Image.BILINEAR, expand=True),
    "thumbnail": thumbnail,
}
print("ready", flush=True)
for line in sys.stdin:
    job = rows[line.strip()]
    start = time.perf_counter(); job(); elapsed = time.perf_counter() - start
    print("%.4f" % (elapsed * 1000), flush=True)
"""#

    /// Starts `python` (a virtual environment with the library, as anchors.sh makes) running
    /// `script` over `fixtures`; nil when there is no such Python or it cannot load the fixtures.
    init?(python: String, script: String, fixtures: URL) {
        guard FileManager.default.isExecutableFile(atPath: python) else { return nil }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script, fixtures.path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        guard readLine() == "ready" else { return nil }
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The milliseconds of one run of `row` (a name of the script's `rows`).
    func time(_ row: String) -> Double {
        input.fileHandleForWriting.write(Data((row + "\n").utf8))
        guard let line = readLine(), let value = Double(line) else { fatalError("the worker stopped at \(row)") }
        return value
    }

    private func readLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            pending.append(chunk)
        }
    }
}
