"""Writes sample_vault's PDF: a sea-swimming club's member handbook, three pages of text.

    uv run python -m scripts.make_sample_pdf            # (re)writes the file; the output never varies
    uv run python -m scripts.make_sample_pdf --check    # exit 1 when the committed file differs

Made here, not downloaded, so the vault's licence covers it and tests know every word on every page
(tests/eval/questions-files.jsonl asks about single pages of it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.pdfwriter import text_pdf

VAULT = Path(__file__).resolve().parent.parent / "sample_vault"
OUTPUT = VAULT / "attachments" / "Wirral Sea Swimmers handbook 2026.pdf"
TITLE = "Wirral Sea Swimmers - Member handbook 2026"

PAGES = [
    [
        "# Wirral Sea Swimmers - Member handbook 2026",
        "",
        "Welcome to the club. We swim all year round from the Marine Point slipway at New Brighton.",
        "",
        "# Membership",
        "Membership costs 35 pounds a year (15 pounds for under-18s and students) and runs from",
        "1 April to 31 March. It includes third-party insurance through British Triathlon and",
        "entry to the winter series of 400 m races.",
        "",
        "# Club swims",
        "Saturday 8:00 and Wednesday 18:30 from the slipway, all year. The Wednesday swim stops",
        "from November to February, when it is dark by then.",
        "",
        "# Who to ask",
        "Swim secretary: Joan Okafor. Membership and insurance questions: Dev Mistry, treasurer.",
        "Lost property is kept in the blue box in the Marine Point cafe.",
    ],
    [
        "# Tides and where to swim",
        "",
        "Tide times in the club's WhatsApp group are for Liverpool (Gladstone Dock).",
        "Add 5 minutes to get the time of high water at New Brighton.",
        "",
        "At low water the sea goes out more than a kilometre here. Do not follow it out:",
        "the sandbanks off Harrison Drive have deep channels that fill fast on the flood.",
        "",
        "On spring tides the ebb current past Perch Rock runs at up to 3 knots. Never swim",
        "beyond the lighthouse, and turn back at the second yellow buoy.",
        "",
        "Red flag at the slipway: no club swim, whatever the tide says. The swim secretary",
        "posts a cancellation in the group by 7:00 on Saturdays.",
    ],
    [
        "# Cold water and kit",
        "",
        "When the water is below 12 degrees, keep your first swims of the season to 10 minutes",
        "and add a few minutes a week. A bright tow float and a coloured hat are compulsory",
        "at every club swim; neoprene gloves and socks are recommended below 10 degrees.",
        "",
        "Buddy rule: never swim alone. Write your name on the whiteboard at the slipway before",
        "you go in and cross it out when you are out.",
        "",
        "Know the umbles: someone who stumbles, mumbles, fumbles or grumbles after a swim may be",
        "hypothermic. Get them dry, dressed and out of the wind, with a warm drink.",
        "",
        "Afterdrop: your core keeps cooling for 20 to 30 minutes after you get out. Dress first,",
        "then drink something warm; no hot shower straight away.",
    ],
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the committed file is current")
    args = parser.parse_args(argv)
    data = text_pdf(PAGES, title=TITLE)
    if args.check:
        current = OUTPUT.exists() and OUTPUT.read_bytes() == data
        print(f"{OUTPUT.name}: {'current' if current else 'differs from what the script writes'}")
        return 0 if current else 1
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_bytes(data)
    print(f"wrote {OUTPUT} ({len(data)} bytes, {len(PAGES)} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
