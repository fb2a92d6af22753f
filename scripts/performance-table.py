#!/usr/bin/env python3
"""Writes the table of DocC Performance from Benchmarks/RESULTS.md.

usage: performance-table.py RESULTS.md Performance.md

Picks the rows below out of the run's tables (a row measured twice, as the manager's on /tmp
and on tmpfs, is taken where it comes last: the tmpfs one) and replaces what stands between the
two markers of Performance.md with one table: the figure, what it is set against and the ratio,
with the run's date and commit. A row the run did not make shows a dash.
"""
import re
import sys

START, END = "<!-- latest-run: start -->", "<!-- latest-run: end -->"

# (section heading starts with, row label starts with, label shown, column of our figure,
#  what the ratio is against, column of the ratio). Columns count from 1 after the label.
ROWS = [
    ("Codecs", "12 MP JPEG decode", "12 MP JPEG decode", 1, "libjpeg-turbo called directly", 3),
    ("Codecs", "12 MP progressive JPEG decode", "12 MP progressive JPEG decode", 1, "libjpeg-turbo called directly", 3),
    ("Codecs", "12 MP JPEG -> 256 px", "12 MP JPEG to 256 px (decode at size)", 1, "libjpeg-turbo at 1/8 directly", 3),
    ("Codecs", "1024x768 RGBA PNG decode", "1024x768 PNG decode", 1, "libpng called directly", 3),
    ("Codecs", "1024x768 lossy WebP decode", "1024x768 lossy WebP decode", 1, "libwebp called directly", 3),
    ("Codecs", "30-frame GIF, all frames", "30-frame GIF, every frame", 1, "giflib called directly", 3),
    ("Today's formats", "decode converted to sRGB (default)", "12 MP Display P3 JPEG decoded to sRGB", 1, "the same decode as stored", 2),
    ("Today's formats", "PQ (BT.2100", "12 MP HDR (PQ) tone-mapped to sRGB, one core", 1, "its target of 30 ms", 3),
    ("Transformers (2 cores)", "4000x3000 RGBA -> 256x192", "12 MP to 256 px, Lanczos-3", 1, "Pillow, same rounds", 2),
    ("Transformers (2 cores)", "12 MP JPEG -> 256 px thumbnail", "12 MP JPEG to a 256 px thumbnail", 1, "Pillow draft + thumbnail", 2),
    ("Caches (disk cache on tmpfs)", "memory hit through ImageCache", "memory hit through `ImageCache`", 1, "its target of 1 us", 3),
    ("Caches (disk cache on tmpfs)", "disk hit of a 12 KB JPEG", "disk hit of a 12 KB JPEG, decode included", 1, "read and decode in the task", 3),
    ("Caches (disk cache on tmpfs)", "store 1,000 x 12 KB entries, submitted together", "1,000 stores of 12 KB, submitted together", 1, "write-then-rename in the task", 3),
    ("HTTP loading", "1,000 x 12 KB, 6 at once (all requested, the client's limit)", "1,000 x 12 KB over HTTP, 6 at once", 1, "curl --parallel", 3),
    ("HTTP loading", "one 50 MiB file", "one 50 MiB file over HTTP", 1, "curl", 3),
    ("HTTP loading", "memory hit through image(for:)", "memory hit through `image(for:)`", 1, "the memory cache's own look-up", 3),
    ("HTTP loading", "1,000 concurrent image(for:) of one uncached 1024x768 WebP", "1,000 callers of one uncached WebP", 1, "one call", 3),
    ("HTTP loading", "the same against the sum of its three stages", "1,000 small JPEGs end to end", 1, "its three stages run alone", 3),
    ("HTTP loading", "pipeline overhead", "pipeline overhead (no caches)", 1, "load-then-decode by hand", 3),
    ("Instruction counts", "memory hit through image(for:)", "memory hit, in instructions (1,000 calls)", 1, "the memory cache alone", 3),
    ("Instruction counts", "1,000 concurrent image(for:)", "1,000 callers of one image, in instructions", 1, "one task loading while 1,000 wait", 3),
    ("Instruction counts", "pipeline overhead", "pipeline overhead, in instructions", 1, "load-then-decode by hand", 3),
    ("Image server against thumbor", "cold requests/s", "`webimage serve` cold, requests/s", 1, "thumbor", 3),
    ("Image server against thumbor", "cold requests/s", "`webimage serve` cold, requests/s", 1, "the libvips server", 5),
    ("Image server against thumbor", "warm requests/s", "`webimage serve` warm, requests/s", 1, "thumbor", 3),
    ("Image server against thumbor", "warm requests/s", "`webimage serve` warm, requests/s", 1, "nginx's cache before libvips", 5),
    ("Image server against thumbor", "peak RSS MB, cold, server and workers", "`webimage serve` cold, peak RSS MB", 1, "thumbor", 3),
]


def sections(text):
    """Heading -> the rows of its tables, each a pair of its cells and its table's header cells."""
    found, heading, header = {}, "", None
    for line in text.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            found.setdefault(heading, [])
        elif not line.startswith("|"):
            header = None
        elif heading and not re.match(r"^\|\s*-", line):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            else:
                found[heading].append((cells, header))
    return found


def pick(found, section, label):
    """The row named `label` exactly, else the last that starts with it; with its header."""
    rows = [entry for heading, table in found.items() if heading.startswith(section) for entry in table]
    exact = [entry for entry in rows if entry[0][0] == label]
    starting = [entry for entry in rows if entry[0][0].startswith(label)]
    return (exact or starting or [(None, None)])[-1]


def main():
    results, target = sys.argv[1], sys.argv[2]
    text = open(results).read()
    found = sections(text)
    when = re.search(r"on (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", text)
    commit = re.search(r"- commit: (\S+)", text)
    lines = [START, "",
             f"The run of {when.group(1) if when else 'an unknown date'} (commit {commit.group(1) if commit else 'unknown'}),"
             " from `Benchmarks/RESULTS.md`:", "",
             "| benchmark | ours | against | ratio |", "| --- | ---: | --- | ---: |"]
    for section, label, shown, ours, against, ratio in ROWS:
        row, header = pick(found, section, label)
        cell = lambda i: (row[i] if row and i < len(row) and row[i] else "-")
        figure = re.sub(r"\s*\([^)]*\)", "", cell(ours))
        unit = re.search(r" (ms|us|ns)$", header[ours]) if header and ours < len(header) else None
        if unit and re.fullmatch(r"[\d.,]+", figure):
            figure += " " + unit.group(1)
        value = cell(ratio)
        found_ratio = re.search(r"\d+(\.\d+)?x", value)
        lines.append(f"| {shown} | {figure} | {against} | {found_ratio.group(0) if found_ratio else value} |")
    # Sections written by a run of their own (server-bench.sh --write, or by hand) say when.
    own = [f"- {heading}: {match.group(1)}" for heading, match in
           ((h, re.search(r"on (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", body))
            for h, body in re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", text, re.S | re.M)) if match]
    if own:
        lines += ["", "Sections of `RESULTS.md` that a run of their own wrote:", ""] + own
    lines += ["", END]
    page = open(target).read()
    start, end = page.find(START), page.find(END)
    if start < 0 or end < start:
        sys.exit(f"performance-table: {target} has no {START} ... {END}")
    open(target, "w").write(page[:start] + "\n".join(lines) + page[end + len(END):])


if __name__ == "__main__":
    main()
