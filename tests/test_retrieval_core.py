"""Pure ranking pieces: fusion, graph boost, table text, note records, metrics."""

import pytest

from vask_server.adapters.sql import filters_to_where
from vask_server.core.chunk import ChunkOptions, chunk_note, table_as_text
from vask_server.core.describe import describe, is_hub, note_record
from vask_server.core.metrics import Outcome, Question, parse_questions, summarise
from vask_server.core.parse import parse_note
from vask_server.core.retrieve import (
    EXACT_LIFT,
    Filters,
    fuse,
    fuse_convex,
    graph_boost,
    holds_quoted,
    limit_per_note,
    quoted_terms,
    row_to_hit,
    topic_query,
)


def row(id_: str, path: str, score: float = 0.5) -> dict:
    return {"id": id_, "path": path, "score": score, "title": path, "text": ""}


def test_reciprocal_rank_fusion_rewards_agreement():
    vector = [row("a", "A.md", 0.9), row("b", "B.md", 0.8), row("c", "C.md", 0.7)]
    keyword = [row("c", "C.md", 12.0), row("d", "D.md", 9.0)]
    ranked = fuse(vector, keyword)
    assert [r.row["id"] for r in ranked][:2] == ["c", "a"]  # c is in both lists
    c = ranked[0]
    assert c.similarity == 0.7 and c.keyword == 12.0 and c.keyword_rank == 1
    assert ranked[-1].row["id"] == "d" and ranked[-1].similarity is None


def test_convex_fusion_keeps_how_strong_each_match_is():
    vector = [row("a", "A.md", 0.62), row("b", "B.md", 0.60), row("c", "C.md", 0.30)]
    # the keyword list's best is a weak semantic match (a common word); b is a close second in both
    keyword = [dict(row("c", "C.md", 10.0), similarity=0.30), dict(row("b", "B.md", 8.0), similarity=0.60)]
    ranked = fuse_convex(vector, keyword, alpha=0.9)
    assert [r.row["id"] for r in ranked] == ["b", "a", "c"]
    b, a, c = ranked
    assert abs(b.fused - (0.9 * 0.60 + 0.1 * 0.8)) < 1e-9 and abs(a.fused - 0.9 * 0.62) < 1e-9
    assert abs(c.fused - (0.9 * 0.30 + 0.1 * 1.0)) < 1e-9  # first by keyword, still last: its cosine is low
    # reciprocal ranks see only positions: the keyword list's first (c) comes out on top
    assert fuse(vector, keyword)[0].row["id"] == "c"
    # no keyword list: the cosine order, scaled
    assert [r.row["id"] for r in fuse_convex(vector, [])] == ["a", "b", "c"]
    # an exact match (every content word of the query in the passage) gets the keyword share twice,
    # and for a one- or two-word query it ranks above closer cosines that are not exact: the lift
    # that puts it there is in its score, so the scores read in the order of the list
    rare = dict(row("q", "Q.md", 10.0), similarity=0.2, text="Added a note about quokkas.")
    other = dict(row("o", "O.md", 8.0), similarity=0.1, text="Another note.")
    exact = fuse_convex(vector, [rare, other], query="quokkas", alpha=0.9)
    assert exact[0].row["id"] == "q" and abs(exact[0].fused - (0.9 * 0.2 + 0.1 * 2.0 + EXACT_LIFT)) < 1e-9
    assert [r.fused for r in exact] == sorted((r.fused for r in exact), reverse=True)
    assert fuse_convex(vector, [rare, other], query="wombats", alpha=0.9)[0].row["id"] == "a"
    # a longer question is ranked by score alone, exact or not
    long_question = "Added a note about quokkas today"
    rare_long = dict(rare, text=long_question)
    assert fuse_convex(vector, [rare_long, other], query=long_question, alpha=0.9)[0].row["id"] == "a"
    # a keyword match that stands out (1.5 x any other note's best) comes first whatever its cosine:
    # a rare term the embedding model does not know
    weak_other = dict(other, score=6.0)
    assert fuse_convex(vector, [rare, weak_other], query="How long did the Litestream drill take?")[0].row["id"] == "q"
    same_note = dict(row("q2", "Q.md", 9.5), similarity=0.1)  # a second passage of the same note is not a rival
    assert fuse_convex(vector, [rare, same_note, weak_other], query="Litestream drill")[0].row["id"] == "q"


def test_graph_boost_is_bounded_and_needs_co_citation():
    # "a" is first in both lists: a clear best; b, x and n are close calls
    ranked = fuse([row("a", "A.md"), row("b", "B.md"), row("x", "X.md"), row("n", "N.md")], [row("a", "A.md")])
    graph = {"A.md": {"N.md"}, "B.md": {"N.md"}, "X.md": set(), "N.md": {"A.md", "B.md"}}
    boosted = graph_boost(ranked, graph, seeds=3, weight=0.05, min_links=2)
    order = [r.row["id"] for r in boosted]
    assert order.index("n") < order.index("x")  # linked from two strong hits: moves up
    assert order[0] == "a"  # but never over the clear best
    only_one = graph_boost(
        fuse([row("a", "A.md"), row("x", "X.md"), row("n", "N.md")], []), {"A.md": {"N.md"}}, weight=0.05, min_links=2
    )
    assert [r.row["id"] for r in only_one] == ["a", "x", "n"]


def test_filters_escape_user_values():
    where = filters_to_where(Filters(folders=("O'Brien/",), tags=("#Health",), paths=("a'b.md",)))
    assert "starts_with(path, 'O''Brien/')" in where
    assert "array_has_any(tags, ['health'])" in where and "path IN ('a''b.md')" in where
    assert filters_to_where(Filters()) is None


def test_limit_per_note_keeps_the_best_chunks_of_each_note():
    hits = [row_to_hit(row(str(i), p), 1.0 - i / 10) for i, p in enumerate(["A.md", "A.md", "A.md", "B.md"])]
    assert [h.chunk_id for h in limit_per_note(hits, 10, 2)] == ["0", "1", "3"]


def test_tables_read_as_column_value_sentences():
    lines = ["| Area | Status | Next action |", "| --- | :-: | --- |", "| Homelab | Blocked | Wait for the SSD |"]
    assert table_as_text(lines) == ["Area: Homelab; Status: Blocked; Next action: Wait for the SSD."]
    assert table_as_text(lines, key=0) == ["Homelab — Status: Blocked; Next action: Wait for the SSD."]
    assert table_as_text(["| just | pipes |"]) == ["| just | pipes |"]


def test_a_dashboard_row_is_led_by_the_column_that_names_it():
    text = "## Dashboard\n\n| Area | Note | Status | Next action |\n| --- | --- | --- | --- |\n" + "".join(
        f"| {area} | [[{name}]] | {status} | {action} with enough words to make the table long |\n"
        for area, name, status, action in [
            ("Projects", "Launch", "Active", "Fix the widget"),
            ("Projects", "Newsletter", "Paused", "Restart after launch"),
            ("Areas", "Homelab", "Blocked", "Waiting on the replacement SSD"),
            ("Areas", "Running log", "Active", "Two recovery weeks"),
            ("Areas", "Finances", "Watch", "Move money to the tax pot"),
        ]
    )
    chunks = chunk_note(parse_note("Home.md", text), ChunkOptions(table_tokens=40))
    homelab = [c for c in chunks if "SSD" in c.text]
    assert len(homelab) == 1 and len(chunks) == 5  # one row per chunk once the table is over budget
    # "Area" repeats, so "Note" names the rows; the raw text keeps the header for display
    assert (
        "Homelab — Area: Areas; Status: Blocked; Next action: Waiting on the replacement SSD" in homelab[0].embed_text
    )
    assert homelab[0].text.startswith("| Area | Note | Status | Next action |")
    assert homelab[0].line_start == homelab[0].line_end == 7


def test_large_tables_become_rows_that_repeat_the_header():
    text = "## Log\n\n| date | km | note |\n|---|---|---|\n" + "".join(
        f"| 2026-03-{i:02d} | {i} | easy run along the canal with a few strides |\n" for i in range(1, 25)
    )
    chunks = chunk_note(parse_note("Running log.md", text), ChunkOptions(table_tokens=100))
    assert len(chunks) == 24
    for i, chunk in enumerate(chunks, start=1):
        assert chunk.text.startswith("| date | km | note |")
        assert f"2026-03-{i:02d} — km: {i}; note: easy run" in chunk.embed_text
        assert "|" not in chunk.embed_text.split("\n\n", 1)[1]
    grouped = chunk_note(parse_note("Running log.md", text), ChunkOptions(table_tokens=100, table_rows=50))
    assert 1 < len(grouped) < 24  # row groups up to the 100-token table budget
    seed = chunk_note(parse_note("Running log.md", text), ChunkOptions(tables_as_text=False))
    assert len(seed) < len(chunks) and "| 2026-03-01 |" in seed[0].embed_text


def test_a_row_too_long_for_a_chunk_is_split_as_text_not_read_as_rows():
    long_note = " ".join(f"word{i}" for i in range(400))
    text = "| date | km | note |\n|---|---|---|\n| 2026-03-01 | 5 | short |\n" + f"| 2026-03-02 | 8 | {long_note} |\n"
    chunks = chunk_note(parse_note("Log.md", text), ChunkOptions(max_tokens=240, table_tokens=20))
    embedded = "\n".join(chunk.embed_text for chunk in chunks)
    assert "2026-03-01 — km: 5; note: short." in embedded
    assert "word0" in embedded and "word399" in embedded  # nothing lost
    # the pieces of the long row are not re-read as rows of the header ("date: word17 ...")
    assert "date: word" not in embedded and "date: 2026-03-02" not in embedded
    assert all(chunk.line_start <= chunk.line_end for chunk in chunks)


def test_note_record_describes_the_note_as_a_whole():
    note = parse_note(
        "Books/Salt Fat Acid Heat.md",
        "---\naliases: [SFAH]\ntags: [books, cooking]\n---\n# Salt Fat Acid Heat\n\nSamin Nosrat's book on the "
        "four elements of cooking.\n\n## Takeaways\n\nSalt early.\n",
    )
    text = describe(note)
    assert "Also called: SFAH" in text and "Tags: books, cooking" in text and "Sections: Takeaways" in text
    assert "four elements of cooking" in text
    record = note_record(note)
    assert record is not None and record.kind == "note" and record.anchor == "" and record.line_start == 1


def test_hub_notes_get_a_description_from_their_link_labels():
    hub = parse_note(
        "Books MOC.md", "# Books\n\n" + "".join(f"- [[Book {i}|Productivity book {i}]]\n" for i in range(8))
    )
    assert is_hub(hub)
    assert "A hub note linking to: Productivity book 0; Productivity book 1" in describe(hub)
    prose = parse_note("Essay.md", "# Essay\n\n" + "Long prose about many things. " * 40 + "See [[Other]].")
    assert not is_hub(prose)


def test_metrics_count_distinct_notes_and_declines():
    questions = parse_questions(
        [
            '{"id": "1", "question": "a", "expected": ["A.md"], "type": "direct"}',
            '{"id": "2", "question": "b", "expected": ["B.md", "C.md"], "type": "cross"}',
            '{"id": "3", "question": "c", "expected": [], "type": "absent"}',
        ]
    )
    outcomes = [
        Outcome(questions[0], ("A.md", "X.md"), False),
        Outcome(questions[1], ("X.md", "Y.md", "C.md"), False),
        Outcome(questions[2], (), True),
    ]
    summary = summarise(outcomes)
    assert summary.hits[1] == 0.5 and summary.hits[3] == 1.0
    assert abs(summary.mrr - (1 + 1 / 3) / 2) < 1e-9
    assert summary.absent == 1 and summary.absent_declined == 1 and summary.answerable_declined == 0
    assert "answers" not in summary.to_dict()  # no answer step, no answer figures


def test_answer_metrics_count_what_the_model_said():
    from dataclasses import replace

    from vask_server.core.prompt import NOT_IN_NOTES, RULES, says_not_in_notes

    assert NOT_IN_NOTES in RULES  # the phrase counted is the phrase asked for
    assert says_not_in_notes("Your notes don’t say.") and says_not_in_notes("Sorry: your notes do NOT say\nit.")
    assert says_not_in_notes("Your notes don't contain anything about this.")  # a declined search
    assert not says_not_in_notes("Your notes say 1:5:5 [Sourdough].") and not says_not_in_notes("")
    questions = parse_questions(
        [
            '{"id": "1", "question": "a", "expected": ["A.md"], "type": "direct"}',
            '{"id": "2", "question": "b", "expected": ["B.md", "C.md"], "type": "cross"}',
            '{"id": "3", "question": "c", "expected": [], "type": "absent"}',
            '{"id": "4", "question": "d", "expected": [], "type": "absent"}',
        ]
    )
    outcomes = [
        Outcome(questions[0], ("A.md",), False, answer="x [A]", cited=("A.md",)),
        Outcome(questions[1], ("B.md",), False, answer="Your notes don't say.", answer_declined=True),
        Outcome(questions[2], ("X.md",), False, answer="Your notes don't say.", answer_declined=True),
        Outcome(questions[3], ("X.md",), False, answer="made up [X]", cited=("X.md",)),
    ]
    summary = summarise(outcomes).to_dict()
    assert summary["answers"] == {"absent_declined": 1, "answerable_declined": 1, "answerable_citing_expected": 1}
    assert summary["absent_declined"] == 0  # the search declined nothing
    citing_the_second = replace(outcomes[1], answer="C it is [C]", answer_declined=False, cited=("X.md", "C.md"))
    answers = summarise([outcomes[0], citing_the_second]).to_dict()["answers"]
    assert answers == {"absent_declined": 0, "answerable_declined": 0, "answerable_citing_expected": 2}


def test_bad_question_lines_are_reported_with_their_line_number():
    import pytest

    from vask_server.errors import BadRequest

    with pytest.raises(BadRequest) as caught:
        parse_questions(['{"id": "1", "question": "a"}', "not json"], "q.jsonl")
    assert "q.jsonl:2" in caught.value.message
    assert Question("x", "q", (), "absent").absent


def test_an_exact_match_of_every_content_word_counts_as_evidence():
    from vask_server.core.retrieve import covers_query

    row_ = {"title": "Homelab", "heading": "Homelab > Disks", "text": "The SSD RMA ticket is 88213."}
    assert covers_query(row_, "What is the RMA ticket for the homelab SSD?")
    assert covers_query(row_, "88213")
    assert not covers_query(row_, "What guitar practice routine did I set up?")
    assert not covers_query(row_, "what is it?")  # no content words: no evidence


def test_quoted_terms_are_what_the_user_names_exactly():
    assert quoted_terms("What's 'scenius' again?") == ("scenius",)
    assert quoted_terms("In my running notes, what's the 'Grey  zone'?") == ("grey zone",)
    assert quoted_terms('What did I make of "Show Your Work"?') == ("show your work",)
    assert quoted_terms("“Deep work” or ‘shallow’, «tirada»?") == ("deep work", "shallow", "tirada")
    # apostrophes open nothing: contractions, possessives, plural possessives
    assert quoted_terms("What's Sam's plan for the runners' club? Don't know.") == ()
    # a quoted sentence is a citation, not a name; empty quotes name nothing
    assert quoted_terms("Where did I write 'ship it before it feels ready to ship, always'?") == ()
    assert quoted_terms("What is '' or ' - '?") == ()


def test_a_passage_holding_a_quoted_term_is_exact_evidence_and_ranks_first():
    passage = {"title": "Easy runs", "heading": "Easy runs", "text": "Stay out of the grey\nzone on easy days."}
    assert holds_quoted(passage, ("grey zone",))  # across a line break, as the note wraps it
    assert not holds_quoted(passage, ("grey zone", "tempo"))  # every quoted term must be there
    assert not holds_quoted(passage, ("easy day",))  # whole words: "easy days" is not "easy day"
    assert not holds_quoted(passage, ())
    # ranked above closer cosines, although the question has more than two content words
    vector = [row("a", "A.md", 0.62), row("b", "B.md", 0.60)]
    quoted = dict(row("g", "G.md", 3.0), similarity=0.15, **passage)
    other = dict(row("o", "O.md", 2.5), similarity=0.1, text="Running notes.")
    question = "In my running notes, what's the 'grey zone'?"
    assert fuse_convex(vector, [quoted, other], query=question)[0].row["id"] == "g"
    unquoted = "In my running notes, what's the grey zone?"
    assert fuse_convex(vector, [quoted, other], query=unquoted)[0].row["id"] == "a"


def test_topic_query_drops_the_scaffolding_of_a_question():
    assert topic_query("How much did my car insurance renewal cost?") == "much car insurance renewal cost"
    assert topic_query("What did I decide about getting a mortgage?") == "decide getting mortgage"
    # repeated words once, case kept (names), non-English words kept as they are
    assert topic_query("Is Tidepool Pro cheaper than Tidepool Lite?") == "Tidepool Pro cheaper than Lite"
    assert topic_query("¿Cómo se dice sourdough starter?") == "Cómo dice sourdough starter"
    # codes and terms with symbols stay whole; contractions and possessives keep their word
    assert topic_query("What does i+1 mean in my notes?") == "i+1 mean notes"
    assert topic_query("When is the DELE B2 exam?") == "DELE B2 exam"
    assert topic_query("What's Sam’s recipe? Why didn't I ship it?") == "Sam recipe ship"
    # nothing to gain: one content word left, or no scaffolding to drop
    assert topic_query("What is SFAH?") is None
    assert topic_query("sourdough starter ratio") is None


def test_the_prompt_drops_the_weakest_sources_then_old_turns_to_fit():
    from vask_server.core.models import Hit
    from vask_server.core.prompt import ANSWER_TOKENS, fit_prompt
    from vask_server.core.tokens import count_tokens

    def hit(n: int) -> Hit:
        return Hit(f"c{n}", f"N{n}.md", f"Note {n}", f"Note {n}", "", 1, 2, 1.0 - n / 10, "word " * 300)

    hits = [hit(n) for n in range(5)]
    history = [{"role": "user", "content": "earlier " * 200}, {"role": "assistant", "content": "reply " * 200}]
    whole = fit_prompt("q?", hits, history)  # no window given: everything
    assert len(whole.hits) == 5 and whole.dropped == 0 and len(whole.messages) == 4

    def size(prompt) -> int:  # type: ignore[no-untyped-def]
        return sum(count_tokens(m["content"]) + 8 for m in prompt.messages)

    window = size(whole) + ANSWER_TOKENS - 1  # one token short: the weakest source goes
    fitted = fit_prompt("q?", hits, history, context_tokens=window)
    assert [h.chunk_id for h in fitted.hits] == ["c0", "c1", "c2", "c3"] and fitted.dropped == 1
    assert len(fitted.messages) == 4 and size(fitted) + ANSWER_TOKENS <= window
    # sources go before the conversation; the best source stays even when turns must go too
    tiny = fit_prompt("q?", hits, history, context_tokens=ANSWER_TOKENS + 400)
    assert [h.chunk_id for h in tiny.hits] == ["c0"] and tiny.messages[-1] == {"role": "user", "content": "q?"}
    assert len(tiny.messages) == 2  # system (one source) and the question: both old turns dropped
    assert "Source: Note 0" in tiny.messages[0]["content"] and "Note 1" not in tiny.messages[0]["content"]


@pytest.mark.parametrize(
    ("passage", "word", "held"),
    [
        ("the rma ticket 88213 is open", "88213", True),
        ("ticket 882134 is open", "88213", False),  # inside a longer number
        ("easy days and easy day", "easy day", True),  # the second place counts when the first does not
        ("easy days only", "easy day", False),
        ("在obsidian里打开", "obsidian", True),  # a CJK character may touch an English word
        ("my c++ notes", "c++", True),
        ("abc++ notes", "c++", False),
        ("snake_case_name", "case", True),  # "_" is no letter: content_words splits there too
        ("東福寺の紅葉", "紅葉", True),  # a CJK term anywhere in its run
        ("ends with word", "word", True),
        ("wordy", "word", False),
    ],
)
def test_a_whole_word_is_one_no_letter_or_digit_of_a_spaced_script_touches(passage: str, word: str, held: bool) -> None:
    from vask_server.core.retrieve import holds_whole_word

    assert holds_whole_word(passage, word) is held


def test_a_passage_not_embedded_yet_ranks_by_its_words_not_below_every_embedded_one():
    """During a first sync a passage found by keyword only has no cosine yet. Counted as 0 it ranked
    below loose matches of notes embedded before it, though it holds the question's very words; it is
    presumed as close as the closest keyword match that has a cosine, in its share of the best BM25."""
    question = "Careful notes on basil soil compost and the watering routine of early spring mornings"
    own = dict(row("own", "Own.md", 60.0), text=question, keyword_only=True)
    embedded_match = dict(row("k", "K.md", 45.0), similarity=0.30, text="basil soil")  # (not a standout: 60 < 1.5 x 45)
    faint = dict(row("f", "F.md", 15.0), keyword_only=True, text="basil")
    vector = [row("v1", "V1.md", 0.36), row("v2", "V2.md", 0.34), row("v3", "V3.md", 0.33)]
    ranked = fuse_convex(vector, [own, embedded_match, faint], query=question, alpha=0.9)
    order = [r.row["id"] for r in ranked]
    assert order[0] == "own"  # (counted as 0: 0.1 x (1 + 1) = 0.2, below each embedded passage's 0.9 x ~0.35)
    assert abs(ranked[0].fused - (0.9 * 0.30 + 0.1 * 2.0)) < 1e-9 and ranked[0].similarity is None
    # a weak keyword match not embedded yet stays below the embedded passages close in meaning
    assert order.index("f") > order.index("v3")
    # nothing embedded at all yet (the first seconds): ordered by keywords alone
    alone = fuse_convex([], [own, dict(faint, score=30.0)], query=question, alpha=0.9)
    assert [r.row["id"] for r in alone] == ["own", "f"]
