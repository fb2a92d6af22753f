#!/usr/bin/env python3
"""Writes small PDF documents into DIR, the seeds of the PDF fuzz target: shapes, text in a
standard font, several pages of different boxes and rotations, an image XObject (raw and
Flate), a link annotation with a launch action and a JavaScript open action.
Usage: make-pdf-seeds.py DIR"""
import os
import sys
import zlib


def document(pages, catalog_extra=b"", objects=()):
    bodies = [b"<< /Type /Catalog /Pages 2 0 R " + catalog_extra + b" >>",
              b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(len(pages)))
              + b"] /Count %d >>" % len(pages),
              b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, (box, content, extra) in enumerate(pages):
        bodies.append(b"<< /Type /Page /Parent 2 0 R /MediaBox " + box + b" /Resources << /Font << /F1 3 0 R >> "
                      + b"/XObject << /Im1 %d 0 R >> >> /Contents %d 0 R " % (4 + 2 * len(pages), 5 + 2 * i) + extra + b" >>")
        bodies.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    bodies.extend(objects)
    out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for i, body in enumerate(bodies):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % (i + 1) + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(bodies) + 1, xref)
    return out


def image(raw, flate):
    data = zlib.compress(raw) if flate else raw
    return (b"<< /Type /XObject /Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceRGB /BitsPerComponent 8 "
            + (b"/Filter /FlateDecode " if flate else b"") + b"/Length %d >>\nstream\n" % len(data) + data + b"\nendstream")


shapes = b"1 0 0 rg 10 10 90 50 re f 0 0 1 RG 3 w 20 90 m 180 20 l S"
text = b"BT /F1 18 Tf 20 85 Td (Hello) Tj 0 -20 Td [(Kern)-200(ed)] TJ ET"
draw_image = b"q 60 0 0 60 100 60 cm /Im1 Do Q"
pixels = bytes((x * 60) % 256 for x in range(48))
seeds = {
    "shapes.pdf": document([(b"[0 0 200 150]", shapes, b"")], objects=[image(pixels, False)]),
    "text.pdf": document([(b"[0 0 200 150]", text, b"")], objects=[image(pixels, False)]),
    "image.pdf": document([(b"[0 0 200 150]", draw_image, b"")], objects=[image(pixels, True)]),
    "pages.pdf": document([(b"[0 0 200 150]", shapes, b""), (b"[0 0 612 792]", text, b"/Rotate 90"),
                           (b"[-50 -50 50 50]", draw_image, b"/CropBox [0 0 40 40]")], objects=[image(pixels, False)]),
    "actions.pdf": document([(b"[0 0 100 100]", shapes, b"/Annots [7 0 R]")],
                            catalog_extra=b"/OpenAction << /S /JavaScript /JS (app.alert\\(1\\)) >>",
                            objects=[image(pixels, False),
                                     b"<< /Type /Annot /Subtype /Link /Rect [0 0 50 50] /A << /S /Launch /F (/bin/sh) >> >>"]),
}
os.makedirs(sys.argv[1], exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(data)
