#!/usr/bin/env python3
"""Seeds for the FuzzHTTP target: corpus images wrapped in HTTP responses (plain, chunked,
gzip, lying lengths, redirects, 304 with cached validators). Each seed starts with the target's
flags byte (see Fuzz/Sources/FuzzHTTP). Usage: make-http-seeds.py CORPUS_DIR OUT_DIR"""
import gzip, os, sys

corpus, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
picks = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif", "apng": "image/png"}
bodies = []
for folder, mime in picks.items():
    names = sorted(n for n in os.listdir(os.path.join(corpus, folder)) if not n.startswith("."))
    for name in names[:4]:
        with open(os.path.join(corpus, folder, name), "rb") as f:
            data = f.read()
        if len(data) < 200_000:
            bodies.append((name, mime, data))

def head(status, headers):
    return (f"HTTP/1.1 {status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode()

def chunked(data, size=997):
    parts = [b"%x\r\n" % len(data[i:i + size]) + data[i:i + size] + b"\r\n" for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"

count = 0
def seed(flags, payload):
    global count
    with open(os.path.join(out, f"seed-{count:03d}"), "wb") as f:
        f.write(bytes([flags]) + payload)
    count += 1

for name, mime, data in bodies:
    seed(0, head(200, [("Content-Type", mime), ("Content-Length", len(data))]) + data)
    seed(1, head(200, [("Content-Type", mime), ("Transfer-Encoding", "chunked")]) + chunked(data))
    packed = gzip.compress(data)
    seed(3, head(200, [("Content-Type", mime), ("Content-Encoding", "gzip"), ("Content-Length", len(packed))]) + packed)
    seed(0, head(200, [("Content-Type", mime), ("Content-Length", len(data) * 2)]) + data)
name, mime, data = bodies[0]
seed(0, head(302, [("Location", "/image"), ("Content-Length", 0)]))
seed(0, head(404, [("Content-Type", "text/html"), ("Content-Length", 9)]) + b"not found")
validators = b"webimage-validators\n\"abc\"\nWed, 21 Oct 2015 07:28:00 GMT"
for flags in (4, 12):
    seed(flags, bytes([len(validators)]) + validators + head(304, [("ETag", "\"abc\""), ("Content-Length", 0)]))
    seed(flags | 1, bytes([len(validators)]) + validators
         + head(200, [("Content-Type", mime), ("ETag", "\"def\""), ("Content-Length", len(data))]) + data)
print(f"{count} seeds in {out}")
