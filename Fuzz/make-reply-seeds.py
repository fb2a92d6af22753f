#!/usr/bin/env python3
"""Seeds for FuzzWorkerReply: well-formed worker replies (a still image, an animation with a
profile and CICP, each error kind), each as a 16-bit length, the message, then the pixel file."""
import os, struct, sys

def text(value):
    data = value.encode()
    return struct.pack("<H", len(data)) + data

def decoded(width, height, durations, profile=None, cicp=None, loop=-1, orientation=-1):
    message = struct.pack("<IB", 0x57494452, 0) + struct.pack("<qqI", width, height, len(durations)) + struct.pack("<q", loop)
    message += text("png") + struct.pack("<qBB", orientation, 1, 0) + struct.pack("<q", len(profile) if profile is not None else -1)
    message += struct.pack("<B", 0) if cicp is None else struct.pack("<BqqqB", 1, *cicp)
    pixels = bytes((i * 7) & 255 for i in range(width * height * 4 * len(durations)))
    tail = b"".join(struct.pack("<d", d) for d in durations) + (profile or b"")
    return struct.pack("<H", len(message)) + message + pixels + tail

def failed(kind, body):
    message = struct.pack("<IBB", 0x57494452, 1, kind) + body
    return struct.pack("<H", len(message)) + message

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
seeds = {
    "still": decoded(3, 2, [0.0]),
    "animation": decoded(2, 2, [0.1, 0.2, 0.05], profile=b"\0" * 132, cicp=(9, 16, 0, 1), loop=0, orientation=6),
    "empty": failed(0, b""),
    "unsupported": failed(1, text("unknown")),
    "undecodable": failed(2, text("svg") + text("the decoder was ended by signal 6")),
    "too-large": failed(3, struct.pack("<qqq", 65535, 65535, 100000000)),
    "animation-too-large": failed(4, struct.pack("<qqqq", 2000, 2000, 300, 50000000)),
}
for name, data in seeds.items():
    with open(os.path.join(folder, name), "wb") as out:
        out.write(data)
