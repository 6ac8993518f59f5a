"""The PDF text extractor, run as its own process (`python -m vask_server.adapters.pdf_worker`) so
that a file that stalls or crashes the parser costs that file, not the sync: `adapters/pdf.py`
kills the process at the time limit and starts another for the next file.

Protocol: one JSON request a line on stdin, `{"path": "/abs/file.pdf"}`; one JSON answer a line on
stdout, `{"ok": true, "title": str, "pages": [str, ...]}` or `{"ok": false, "status": "failed" |
"skipped", "reason": str}`. The library is pypdfium2 (PDFium, Chrome's PDF engine): the fastest of
those measured and the most forgiving of damaged files (docs/BENCHMARKS.md, "PDF libraries").
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from typing import Any

# Control characters PDFium puts in extracted text: \x02 marks a hyphen it joined at a line end.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def extract(path: str) -> dict[str, Any]:
    import pypdfium2 as pdfium  # (imported here: the parent process never loads it)

    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower():
            return {"ok": False, "status": "failed", "reason": "encrypted: it needs a password to be read"}
        return {"ok": False, "status": "failed", "reason": f"not a readable PDF ({_detail(message)})"}
    try:
        pages: list[str] = []
        for index in range(len(document)):
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    pages.append(clean(textpage.get_text_bounded()))
                finally:
                    textpage.close()
            finally:
                page.close()
        title = ""
        with contextlib.suppress(pdfium.PdfiumError):  # no readable metadata: the file name is the title
            title = str(document.get_metadata_dict().get("Title") or "").strip()
        return {"ok": True, "title": title, "pages": pages}
    finally:
        document.close()


def clean(text: str) -> str:
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\x02", ""))


def _detail(message: str) -> str:
    # PDFium's messages read "Failed to load document (PDFium: Data format error)."
    found = re.search(r"PDFium: ([^)]+)", message)
    return (found.group(1) if found else message).strip().rstrip(".").lower()


def main() -> None:
    import pypdfium2  # noqa: F401 (loaded before the first file, so its start is not counted against it)

    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
            answer = extract(str(request["path"]))
        except Exception as exc:  # a library failure costs one file: the answer says why
            answer = {"ok": False, "status": "failed", "reason": f"the PDF reader failed: {type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
