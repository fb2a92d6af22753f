"""Makes the sample images bundled with the `webimage` CLI (Sources/webimage/Samples).

Deterministic, drawn from code (no photos): run with Pillow installed,
`python3 scripts/make-samples.py`. The files are committed; this script documents them.
"""
import math, os
from PIL import Image, ImageDraw

out = os.path.join(os.path.dirname(__file__), "..", "Sources", "webimage", "Samples")
os.makedirs(out, exist_ok=True)

def scene(w, h, t=0.0):
    im = Image.new("RGB", (w, h))
    px = im.load()
    for y in range(h):
        for x in range(w):
            r = int(127 + 127 * math.sin(x / 23.0 + t))
            g = int(127 + 127 * math.sin(y / 17.0 + t / 2))
            b = int(127 + 127 * math.sin((x + y) / 31.0))
            px[x, y] = (r, g, b)
    d = ImageDraw.Draw(im)
    d.ellipse((w * 0.3, h * 0.25, w * 0.7, h * 0.75), fill=(250, 240, 200), outline=(40, 40, 40), width=3)
    d.text((10, 10), "swift-web-image", fill=(0, 0, 0))
    return im

photo = scene(640, 480)
exif = Image.Exif(); exif[0x0112] = 6
photo.save(os.path.join(out, "photo-progressive-exif6.jpg"), quality=85, progressive=True, exif=exif.tobytes())
photo.save(os.path.join(out, "photo-baseline.jpg"), quality=85)
scene(400, 300).save(os.path.join(out, "photo-lossy.webp"), quality=80)

badge = Image.new("RGBA", (256, 256), (0, 0, 0, 0))
d = ImageDraw.Draw(badge)
d.rounded_rectangle((16, 16, 240, 240), radius=40, fill=(240, 81, 56, 230))
d.ellipse((80, 80, 176, 176), fill=(255, 255, 255, 255))
badge.save(os.path.join(out, "badge-alpha.png"))

frames = []
for i in range(12):
    f = Image.new("RGBA", (160, 120), (255, 255, 255, 0))
    d = ImageDraw.Draw(f)
    x = 10 + i * 10
    d.ellipse((x, 40, x + 40, 80), fill=(30, 120 + i * 10, 220, 255))
    frames.append(f)
frames[0].save(os.path.join(out, "bouncing-ball.gif"), save_all=True, append_images=frames[1:], duration=80, loop=0, disposal=2)
frames[0].save(os.path.join(out, "bouncing-ball.webp"), save_all=True, append_images=frames[1:], duration=80, loop=0, lossless=True)
frames[0].save(os.path.join(out, "bouncing-ball.png"), save_all=True, append_images=frames[1:], duration=80, loop=0, default_image=False)
