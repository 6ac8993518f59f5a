"""A synthetic Obsidian vault for benchmarks, the same bytes for the same seed and size.

Notes are 50-5,000 words (log-normal, median ~900: ~10 chunks a note on average), spread over PARA
folders and daily notes, with YAML frontmatter (title, aliases, tags, dates, status), headings three
levels deep, wikilinks (plain, aliased, to a heading, embeds) to other notes of the vault, inline
#tags, Markdown tables, bullet and task lists, code blocks and callouts. Text is drawn from a fixed
English vocabulary with a per-note topic, so that queries have something to find.

    uv run python scripts/synth_vault.py --notes 10000 --seed 1 --out /tmp/vask-bench/vault-10k

`--topics K` writes a vault whose notes cluster, as real notes do (and as the embeddings of real
notes do): each note belongs to one of K topics (a few large, many small), and notes of a topic share
most of their content words (its 40-word vocabulary, half of it words no other topic uses), so their
vectors sit close together and the ANN index's partitions mean something. Without it (the default,
unchanged bytes) every note draws its topic words at random, and the vectors do not cluster.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

MIN_WORDS = 30
MAX_WORDS = 5000
MEDIAN_WORDS = 850.0
SIGMA = 0.9

_COMMON = """
the of and to in is was for on that with as it by at from this be are have not had but were which or
their one all there can been has more will when who would about into its out some so what them time
up other only new than could these two may first then do any like my now over such our also back
after use how where most well way even because made many before must through years much good being
people those work make world still between own under same another while last might great since
against right three during without again place around however small found thought went point part
""".split()

_WORDS = """
project plan review meeting notes idea draft budget design research reading book chapter summary
lesson habit routine morning evening week month quarter goal target metric progress blocker risk
decision tradeoff option estimate deadline release launch customer feedback interview survey data
analysis model experiment result hypothesis insight pattern question answer problem solution process
system service server database index query cache latency memory disk network request response error
retry backoff timeout queue worker thread async batch stream event log trace alert dashboard chart
table report export import config setting flag default value token password secret key account
garden plant seed soil water compost tomato basil pepper harvest season spring summer autumn winter
running race pace distance training recovery injury stretch strength tempo interval marathon trail
recipe dinner lunch breakfast bread pasta rice soup curry spice oven kitchen market grocery coffee
travel flight train hotel city museum street walk map route weekend holiday beach mountain lake river
family friend partner parent child school teacher student class exam homework birthday gift party
health sleep diet doctor appointment medicine exercise stress energy focus attention calm mood
money savings invest expense income tax rent mortgage insurance pension fund stock bond salary
writing essay article post newsletter audience editor publish outline paragraph sentence voice style
music guitar piano song album concert practice scale chord rhythm melody lyrics band studio record
photo camera lens light shadow frame print gallery edit color contrast portrait landscape street
language spanish grammar vocabulary lesson practice fluency accent conversation podcast subtitle
history philosophy science physics biology chemistry math algebra geometry theory proof argument
""".split()

_ADJ = """
quick slow careful rough clear messy simple complex early late small large cheap expensive quiet
loud fresh stale open closed honest vague useful useless strong weak bright dark warm cold steady
""".split()

_FOLDERS = [
    "00 Inbox",
    "01 Projects",
    "01 Projects/Work",
    "01 Projects/Side",
    "02 Areas/Health",
    "02 Areas/Money",
    "02 Areas/Home",
    "03 Resources/Books",
    "03 Resources/Articles",
    "03 Resources/Recipes",
    "03 Resources/Courses",
    "04 Archive",
    "04 Archive/2023",
    "04 Archive/2024",
]


@dataclass(frozen=True)
class VaultSpec:
    notes: int
    seed: int = 1


def _title(rng: random.Random, used: set[str]) -> str:
    while True:
        parts = [rng.choice(_ADJ).capitalize(), rng.choice(_WORDS), rng.choice(_WORDS)]
        if rng.random() < 0.4:
            parts.append(str(rng.randint(2, 99)))
        title = " ".join(parts)
        if title.lower() not in used:
            used.add(title.lower())
            return title


_SYLLABLES = "ka lo mi ne ru ta vo zi pe su ba do fi gu ha je ko lu ma no pi ra se ti vu wa xe yo zu".split()


def _topics(rng: random.Random, count: int) -> list[list[str]]:
    """`count` topic vocabularies: 20 shared words and 20 made-up words of the topic's own."""
    used: set[str] = set()
    topics = []
    for _ in range(count):
        own = []
        while len(own) < 20:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in used:
                used.add(word)
                own.append(word)
        topics.append(rng.sample(_WORDS, 20) + own)
    return topics


def _sentence(rng: random.Random, topic: list[str], topic_share: float | None = None) -> str:
    length = rng.randint(6, 22)
    words = []
    # (a vault with topics: most content words are the topic's; the default mix is kept byte for byte)
    common, topical = (0.45, 0.75) if topic_share is None else (0.3, 0.3 + topic_share)
    for _ in range(length):
        r = rng.random()
        if r < common:
            words.append(rng.choice(_COMMON))
        elif r < topical:
            words.append(rng.choice(topic))
        elif r < 0.9:
            words.append(rng.choice(_WORDS))
        else:
            words.append(rng.choice(_ADJ))
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice([".", ".", ".", "?", "!"])


class _Writer:
    """Builds one note body word by word, counting prose words toward the note's size."""

    def __init__(
        self, rng: random.Random, topic: list[str], titles: list[str], tags: list[str], share: float | None = None
    ) -> None:
        self.rng = rng
        self.topic = topic
        self.share = share
        self.titles = titles
        self.tags = tags
        self.lines: list[str] = []
        self.words = 0
        self.headings: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)
        self.words += sum(len(line.split()) for line in lines)

    def link(self) -> str:
        rng = self.rng
        target = rng.choice(self.titles)
        r = rng.random()
        if r < 0.6:
            return f"[[{target}]]"
        if r < 0.8:
            return f"[[{target}|{rng.choice(_WORDS)} {rng.choice(_WORDS)}]]"
        if r < 0.95:
            return f"[[{target}#{rng.choice(_WORDS).capitalize()}]]"
        return f"![[{target}]]"

    def paragraph(self) -> None:
        rng = self.rng
        sentences = [_sentence(rng, self.topic, self.share) for _ in range(rng.randint(2, 6))]
        text = " ".join(sentences)
        words = text.split(" ")
        if rng.random() < 0.5:
            words.insert(rng.randrange(len(words)), self.link())
        if rng.random() < 0.2:
            words.insert(rng.randrange(len(words)), "#" + rng.choice(self.tags))
        self.add(" ".join(words), "")

    def bullets(self) -> None:
        rng = self.rng
        task = rng.random() < 0.4
        for _ in range(rng.randint(3, 8)):
            text = _sentence(rng, self.topic, self.share)
            if rng.random() < 0.25:
                text += " " + self.link()
            prefix = f"- [{rng.choice(' x')}] " if task else "- "
            self.add(prefix + text)
        self.add("")

    def table(self) -> None:
        rng = self.rng
        columns = [rng.choice(_WORDS).capitalize() for _ in range(rng.randint(3, 6))]
        self.add("| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|")
        for _ in range(rng.randint(3, 25)):
            cells = []
            for _ in columns:
                r = rng.random()
                if r < 0.4:
                    cells.append(str(rng.randint(1, 5000)))
                elif r < 0.5:
                    cells.append(self.link())
                else:
                    cells.append(" ".join(rng.choice(self.topic + _WORDS) for _ in range(rng.randint(1, 4))))
            self.add("| " + " | ".join(cells) + " |")
        self.add("")

    def code(self) -> None:
        rng = self.rng
        self.add(rng.choice(["```python", "```sh", "```json", "```"]))
        for _ in range(rng.randint(2, 12)):
            name = rng.choice(_WORDS)
            self.add(f"{name} = fetch_{rng.choice(_WORDS)}({rng.randint(0, 99)})  # {rng.choice(_WORDS)}")
        self.add("```", "")

    def callout(self) -> None:
        rng = self.rng
        kind = rng.choice(["note", "tip", "warning", "quote", "todo"])
        text = _sentence(self.rng, self.topic, self.share) + " " + _sentence(self.rng, self.topic, self.share)
        self.add(f"> [!{kind}] {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}", f"> {text}", "")

    def heading(self, level: int) -> None:
        rng = self.rng
        text = f"{rng.choice(_WORDS).capitalize()} {rng.choice(self.topic)}"
        if rng.random() < 0.3:
            text += f" {rng.randint(1, 12)}"
        self.headings.append(text)
        self.add(f"{'#' * level} {text}", "")


def _note(
    rng: random.Random,
    title: str,
    titles: list[str],
    tag_pool: list[str],
    daily: bool,
    median_words: float = MEDIAN_WORDS,
    vocabulary: list[str] | None = None,
) -> str:
    topic = rng.sample(_WORDS, 12) if vocabulary is None else vocabulary
    # Body words, frontmatter and the closing "Related" list aside; the last paragraph may run over.
    target = int(min(MAX_WORDS - 200, max(MIN_WORDS, rng.lognormvariate(math.log(median_words), SIGMA))))
    tags = rng.sample(tag_pool, rng.randint(0, 4))
    writer = _Writer(rng, topic, titles, tag_pool, None if vocabulary is None else _TOPIC_SHARE)
    front: list[str] = []
    if rng.random() < 0.85:
        front.append("---")
        if rng.random() < 0.3:
            front.append(f"aliases: [{rng.choice(_WORDS)} {rng.choice(_WORDS)}]")
        if tags:
            if rng.random() < 0.5:
                front.append(f"tags: [{', '.join(tags)}]")
            else:
                front += ["tags:", *[f"  - {t}" for t in tags]]
        front.append(f"created: 202{rng.randint(2, 6)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
        if rng.random() < 0.5:
            front.append(f"status: {rng.choice(['active', 'done', 'someday', 'draft'])}")
        if rng.random() < 0.2:
            front.append(f"rating: {rng.randint(1, 5)}")
        front.append("---")
    if not daily and rng.random() < 0.7:
        writer.add(f"# {title}", "")
    level = 2
    since_heading = 0
    has_table = rng.random() < 0.3
    while writer.words < target:
        if since_heading > rng.randint(120, 500) and target - writer.words > 60:
            level = rng.choice([2, 2, 2, 3, 3]) if level >= 2 else 2
            writer.heading(level)
            since_heading = 0
        before = writer.words
        r = rng.random() if target - writer.words > 400 else 1.0  # near the end: a paragraph only
        if has_table and r < 0.06:
            writer.table()
        elif r < 0.18:
            writer.bullets()
        elif r < 0.22:
            writer.code()
        elif r < 0.26:
            writer.callout()
        else:
            writer.paragraph()
        since_heading += writer.words - before
    if rng.random() < 0.5:
        writer.add("## Related", "", *[f"- {writer.link()}" for _ in range(rng.randint(1, 5))], "")
    body = "\n".join(writer.lines).rstrip() + "\n"
    return ("\n".join(front) + "\n" if front else "") + body


_TOPIC_SHARE = 0.6  # of a note's words, in a vault with topics: its topic's


def generate(
    out: Path, notes: int, seed: int = 1, median_words: float = MEDIAN_WORDS, topics: int | None = None
) -> dict[str, int]:
    """Writes the vault (replacing `out`); returns counts. Deterministic for (notes, seed, median_words,
    topics). A smaller `median_words` makes many short notes (the 100,000-note benchmark vault: 350);
    `topics`: notes in that many topics, which cluster (see the module's docstring)."""
    rng = random.Random(f"vask-synth-{seed}-{notes}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    used: set[str] = set()
    daily_count = notes // 5
    titles = [_title(rng, used) for _ in range(notes - daily_count)]
    tag_pool = sorted({rng.choice(_WORDS) for _ in range(80)} | {f"area/{rng.choice(_WORDS)}" for _ in range(10)})
    paths: list[tuple[str, str, bool]] = []
    for title in titles:
        paths.append((rng.choice(_FOLDERS), title, False))
    start = 738_000  # a proleptic ordinal: daily notes from 2021 on
    for day in range(daily_count):
        paths.append(("Daily", date.fromordinal(start + day).isoformat(), True))
    # (topics from an rng of their own: the default vault's draws stay as they were)
    topic_rng = random.Random(f"vask-topics-{seed}-{notes}-{topics}")
    vocabularies = _topics(topic_rng, topics) if topics else []
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(vocabularies))]  # a few large topics, many small
    words: list[int] = []
    for folder, title, daily in paths:
        directory = out / folder
        directory.mkdir(parents=True, exist_ok=True)
        vocabulary = topic_rng.choices(vocabularies, weights)[0] if vocabularies else None
        text = _note(rng, title, titles, tag_pool, daily, median_words, vocabulary)
        words.append(len(text.split()))
        (directory / f"{title}.md").write_text(text, encoding="utf-8")
    (out / ".obsidian").mkdir()
    (out / ".obsidian" / "app.json").write_text("{}\n")
    return {
        "notes": len(paths),
        "words": sum(words),
        "min_words": min(words),
        "median_words": sorted(words)[len(words) // 2],
        "max_words": max(words),
        "bytes": sum(p.stat().st_size for p in out.rglob("*.md")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--median-words", type=float, default=MEDIAN_WORDS, help="median body words a note")
    parser.add_argument("--out", type=Path, required=True, help="folder to create (replaced if it exists)")
    parser.add_argument("--topics", type=int, default=None, help="notes in this many topics, which cluster")
    args = parser.parse_args()
    started = time.perf_counter()
    counts = generate(args.out, args.notes, args.seed, args.median_words, args.topics)
    print(
        f"wrote {counts['notes']} notes, {counts['words']} words (per note: min {counts['min_words']}, median "
        f"{counts['median_words']}, max {counts['max_words']}), {counts['bytes'] / 1e6:.1f} MB to {args.out} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
