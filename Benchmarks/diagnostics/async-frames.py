#!/usr/bin/env python3
# The async frame size of every function of the WebImage module in a built binary, largest
# first, for diagnosis: each async function has an "async function pointer" record (symbol
# suffix "Tu": a relative offset, then the size of its frame in task memory), and a frame that
# does not fit the task's current slab costs a slab of its own.
# Usage: async-frames.py BINARY [COUNT]   (needs nm, readelf and swift demangle)
import re
import struct
import subprocess
import sys

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
symbols = []
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split(None, 2)
    if len(parts) == 3 and parts[2].endswith("Tu") and "WebImage" in parts[2]:
        symbols.append((int(parts[0], 16), parts[2]))
sections = []
for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    match = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if match and match.group(1) not in (".bss", ".tbss"):
        sections.append((int(match.group(2), 16), int(match.group(3), 16), int(match.group(4), 16)))
data = open(binary, "rb").read()
frames = []
for address, name in symbols:
    for start, offset, size in sections:
        if start <= address < start + size:
            position = offset + address - start
            frames.append((struct.unpack("<iI", data[position:position + 8])[1], name))
            break
frames.sort(reverse=True)
names = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(name for _, name in frames[:count]),
                       capture_output=True, text=True, check=True).stdout.splitlines()
for (size, _), name in zip(frames, names):
    print(size, name.replace("async function pointer to ", ""))
