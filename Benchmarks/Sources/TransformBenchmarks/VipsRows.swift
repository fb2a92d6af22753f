/// pyvips's rows for the image server's options (`webimage serve`), each the operation as a
/// libvips-based proxy does it (imgproxy's own calls where it has one), on the 1024x768 RGBA
/// fixture held in memory, the result made (`copy_memory`), libvips's default threads and no
/// operation cache.
enum VipsRows {
    static let script = #"""
import sys, time
import pyvips
pyvips.cache_set_max(0)
fx = sys.argv[1]
medium = pyvips.Image.new_from_file(fx + "/rgba-1024x768.png").copy_memory()
framed = medium.embed(20, 30, 1024 + 50, 768 + 40, extend="background", background=[255, 255, 255, 255]).copy_memory()
mark = medium.resize(0.125).copy_memory()
half = (mark * [1, 1, 1, 0.5]).cast("uchar").copy_memory()
def trim():
    left, top, width, height = framed.find_trim(threshold=10, background=[255, 255, 255])
    return framed.crop(left, top, width, height).copy_memory()
def adjust():
    im = medium.linear([1.5, 1.5, 1.5, 1], [20 * 1.5 - 64, 20 * 1.5 - 64, 20 * 1.5 - 64, 0])
    lch = im.colourspace("lch")
    return (lch * [1, 0.5, 1, 1]).colourspace("srgb").cast("uchar").copy_memory()
rows = {
    "sharpen": lambda: medium.sharpen(sigma=1).copy_memory(),
    "smartcrop": lambda: medium.smartcrop(300, 300, interesting="attention").copy_memory(),
    "pixelate": lambda: medium.shrink(16, 16).zoom(16, 16).crop(0, 0, 1024, 768).copy_memory(),
    "adjust": adjust,
    "trim": trim,
    "watermark": lambda: medium.composite2(half, "over", x=880, y=660).copy_memory(),
    "padding": lambda: medium.embed(10, 20, 1024 + 40, 768 + 20, extend="background", background=[255, 255, 255, 255]).copy_memory(),
}
print("ready", flush=True)
for line in sys.stdin:
    job = rows[line.strip()]
    start = time.perf_counter(); job(); elapsed = time.perf_counter() - start
    print("%.4f" % (elapsed * 1000), flush=True)
"""#
}
