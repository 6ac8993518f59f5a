"""Text extraction speed of the PDF libraries considered for vask, on the same files, in one run.

    uv run --with pdfminer.six python -m scripts.bench_pdf_libs [PDF ...] [--repeat 5]

pypdfium2 is vask's dependency and pypdf a development one; pdfminer.six is only needed for this
comparison (hence `--with`). Without files it measures the sample vault's PDF and a generated
200-page text PDF. Prints, per file and library, the median seconds of `--repeat` full extractions
(every page's text) and the characters extracted, so a library that reads less is seen too.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from scripts.make_sample_pdf import OUTPUT as SAMPLE_PDF
from scripts.pdfwriter import text_pdf


def with_pypdfium2(path: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    total = 0
    for index in range(len(document)):
        page = document[index]
        textpage = page.get_textpage()
        total += len(textpage.get_text_bounded())
        textpage.close()
        page.close()
    document.close()
    return total


def with_pypdf(path: Path) -> int:
    from pypdf import PdfReader

    return sum(len(page.extract_text() or "") for page in PdfReader(str(path)).pages)


def with_pdfminer(path: Path) -> int:
    from pdfminer.high_level import extract_text_to_fp

    out = io.StringIO()
    with path.open("rb") as handle:
        extract_text_to_fp(handle, out)
    return len(out.getvalue())


LIBRARIES: dict[str, Callable[[Path], int]] = {
    "pypdfium2": with_pypdfium2,
    "pypdf": with_pypdf,
    "pdfminer.six": with_pdfminer,
}


def generated(folder: Path, pages: int = 200) -> Path:
    lines = [f"Line {n}: the quick brown fox jumps over the lazy dog near the harbour wall." for n in range(48)]
    path = folder / f"generated-{pages}-pages.pdf"
    path.write_bytes(text_pdf([[f"# Page {p}", *lines] for p in range(1, pages + 1)], title="Generated"))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        files = args.files or [SAMPLE_PDF, generated(Path(folder))]
        print(f"{'file':<44}{'KB':>7}  {'library':<13}{'median s':>10}{'chars':>10}")
        for path in files:
            for name, extract in LIBRARIES.items():
                try:
                    extract(path)  # warm: imports and caches are not what is compared
                except ImportError:
                    print(f"{path.name[:43]:<44}{'':>7}  {name:<13}  not installed")
                    continue
                times = []
                chars = 0
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    chars = extract(path)
                    times.append(time.perf_counter() - started)
                size = path.stat().st_size / 1024
                print(f"{path.name[:43]:<44}{size:>7.0f}  {name:<13}{statistics.median(times):>10.3f}{chars:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
