"""A tiny PDF writer: pages of plain text in the standard Helvetica fonts, and a document title.

Enough for the sample vault's PDF (scripts/make_sample_pdf.py) and the test suite's broken,
empty and stalling PDFs, with no dependency and byte-for-byte the same output on every run (no
dates, no random ids). Text is Latin-1 (WinAnsi); lines are laid out as given, no wrapping.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

PAGE_WIDTH, PAGE_HEIGHT = 595, 842  # A4 in points
_MARGIN = 56


def _escape(text: str) -> bytes:
    raw = text.encode("cp1252", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def page_stream(lines: Sequence[str], size: int = 11) -> bytes:
    """A content stream showing `lines` top to bottom; a line that starts with "# " is a bold heading."""
    out = [b"BT", f"{_MARGIN} {PAGE_HEIGHT - _MARGIN} Td".encode(), f"{size * 1.45:.1f} TL".encode()]
    for line in lines:
        bold = line.startswith("# ")
        text = line[2:] if bold else line
        font = b"/F2 14 Tf" if bold else f"/F1 {size} Tf".encode()
        out += [font, b"(" + _escape(text) + b") Tj", b"T*"]
    out.append(b"ET")
    return b"\n".join(out)


def build_pdf(pages: Sequence[bytes], *, title: str = "", compress: bool = True) -> bytes:
    """A PDF of these content streams, one a page (see `page_stream`), with `title` in its Info."""
    objects: list[bytes] = [b""] * 4  # 1 catalog, 2 pages, 3 and 4 fonts; then page and content pairs
    kids: list[int] = []
    for stream in pages:
        data = zlib.compress(stream, 9) if compress else stream
        flate = b" /Filter /FlateDecode" if compress else b""
        objects.append(b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), flate, data))
        content = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>" % (PAGE_WIDTH, PAGE_HEIGHT, content)
        )
        kids.append(len(objects))
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    objects[2] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
    info = None
    if title:
        objects.append(b"<< /Title (" + _escape(title) + b") /Producer (vask scripts/pdfwriter.py) >>")
        info = len(objects)
    body = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(body))
        body += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"<< /Size %d /Root 1 0 R%s >>" % (len(objects) + 1, b" /Info %d 0 R" % info if info else b"")
    body += b"trailer\n%s\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref)
    return bytes(body)


def text_pdf(pages: Sequence[Sequence[str]], *, title: str = "") -> bytes:
    """A PDF with one page per list of lines."""
    return build_pdf([page_stream(lines) for lines in pages], title=title)
