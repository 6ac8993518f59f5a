"""The text work of a proposed change (core/proposals.py): where a note's own words become a link, where a
link goes when they do not, how the link names its note, exact replacements, and the diff a person reads."""

from __future__ import annotations

import pytest

from vask_server.core.links import LinkResolver
from vask_server.core.parse import parse_note
from vask_server.core.proposals import (
    EditMismatch,
    Proposal,
    apply_replacements,
    find_mention,
    link_markup,
    link_under_heading,
    propose_link,
    prose_mask,
    unified_diff,
    usable_names,
)


def linked(text: str, names: list[str], link_name: str = "Zotero 101", **kwargs: object) -> str:
    return propose_link(text, names, link_name, **kwargs).after  # type: ignore[arg-type]


def test_the_words_already_there_become_the_link_with_them_shown() -> None:
    text = "# Reading\n\nI keep every paper in zotero and tag it.\n"
    edit = propose_link(text, ["Zotero 101", "zotero"], "Zotero 101")
    assert edit.placement == "mention" and edit.shown == "zotero" and edit.line == 3
    assert edit.after == "# Reading\n\nI keep every paper in [[Zotero 101|zotero]] and tag it.\n"
    # the same words, written as the link names its note: no alias
    assert linked("See Zotero 101 first.", ["Zotero 101"]) == "See [[Zotero 101]] first."
    # a name written in other case is shown as written
    assert linked("see zotero 101 first", ["Zotero 101"]) == "see [[Zotero 101|zotero 101]] first"


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: about Zotero\n---\nbody\n",  # frontmatter
        "```\nZotero in code\n```\n",  # a fenced block
        "~~~python\nZotero = 1\n~~~\n",
        "use `Zotero` here\n",  # inline code
        "see [[Zotero]] and [[Other|Zotero]]\n",  # links already
        "![[Zotero.png]] and [Zotero](https://zotero.org)\n",
        "%% Zotero in a comment %%\n",
        "<!-- Zotero\nspans lines -->\n",
        "https://www.zotero.org/download\n",  # a URL
        "#Zotero tagged\n",  # a tag
        "## Zotero setup\n",  # a heading: a link would change its anchor
        "| tool | Zotero |\n|---|---|\n",  # a table row: a link's | would split the cell
        "Zoteros and MyZotero and Zotero_x\n",  # not words of their own
    ],
)
def test_words_that_are_not_running_prose_never_become_the_link(text: str) -> None:
    assert find_mention(text, ["Zotero"]) is None


def test_the_first_mention_is_linked_and_the_longest_name_where_two_start_together() -> None:
    text = "Before `Zotero` code. Then Zotero 101 is read, then Zotero again.\n"
    edit = propose_link(text, ["Zotero", "Zotero 101"], "Zotero 101")
    assert edit.after == "Before `Zotero` code. Then [[Zotero 101]] is read, then Zotero again.\n"
    assert usable_names(["a", "Zotero", "zotero", "x|y", "Zotero 101", " "]) == ["Zotero 101", "Zotero"]


def test_names_in_scripts_without_spaces_match_inside_a_sentence() -> None:
    edit = propose_link("今日は会議録を書いた。", ["会議録"], "会議録")
    assert edit.after == "今日は[[会議録]]を書いた。"


def test_a_mention_after_a_multi_line_comment_is_still_found() -> None:
    text = "%% hidden\nZotero inside\n%%\nZotero outside\n"
    mask = prose_mask(text)
    mention = find_mention(text, ["Zotero"], mask)
    assert mention is not None and mention.start == text.rindex("Zotero") and mention.shown == "Zotero"


def test_without_a_mention_the_link_goes_under_the_heading_made_at_the_end() -> None:
    edit = propose_link("# Bread\n\nFlour and water.\n", ["Zotero 101"], "Zotero 101")
    assert edit.placement == "heading" and edit.heading_created and edit.heading == "Related"
    assert edit.after == "# Bread\n\nFlour and water.\n\n## Related\n- [[Zotero 101]]\n"
    assert edit.after.splitlines()[edit.line - 1] == "- [[Zotero 101]]"
    # no newline at the end, a note's own CRLF, a heading the person chose
    assert linked("a\r\nb", ["X"], "X", heading="See also") == "a\r\nb\r\n\r\n## See also\r\n- [[X]]\r\n"
    assert linked("", ["X"], "X") == "## Related\n- [[X]]\n"


def test_an_existing_heading_gets_the_link_as_its_sections_last_item() -> None:
    text = "# Note\n\n## related\n- [[A]]\n- [[B]]\n\n\n## Next\ntext\n"
    edit = link_under_heading(text, "Related", "[[C]]")
    assert edit.after == "# Note\n\n## related\n- [[A]]\n- [[B]]\n- [[C]]\n\n\n## Next\ntext\n"
    assert not edit.heading_created and edit.heading == "related" and edit.line == 6
    # after a paragraph: a blank line first; a deeper heading belongs to the section
    text = "## Related\nSome words.\n### Deeper\nmore\n## Other\n"
    assert link_under_heading(text, "Related", "[[C]]").after == (
        "## Related\nSome words.\n### Deeper\nmore\n\n- [[C]]\n## Other\n"
    )
    # an empty section at the end without a final newline; a "heading" inside code is no heading
    assert link_under_heading("## Related", "Related", "[[C]]").after == "## Related\n- [[C]]\n"
    text = "```\n## Related\n```\n"
    assert link_under_heading(text, "Related", "[[C]]").after == "```\n## Related\n```\n\n## Related\n- [[C]]\n"


def test_the_link_names_its_note_as_obsidian_would_and_the_index_reads_it_back() -> None:
    paths = ["A/Plan.md", "B/Plan.md", "A/Unique.md", "Top.md", "A/Sub/Deep.md", "img/Plan.png"]
    resolver = LinkResolver(paths)
    assert resolver.link_text("A/Unique.md", "Top.md") == "Unique"
    assert resolver.link_text("B/Plan.md", "Top.md") == "B/Plan"  # the name is ambiguous
    assert resolver.link_text("A/Unique.md", "Top.md", "absolute") == "A/Unique"
    assert resolver.link_text("A/Sub/Deep.md", "A/Plan.md", "relative") == "Sub/Deep"
    assert resolver.link_text("img/Plan.png", "Top.md") == "Plan.png"
    for target in paths:
        for style in ("shortest", "relative", "absolute"):
            written = resolver.link_text(target, "A/Sub/Deep.md", style)
            note = parse_note("A/Sub/Deep.md", f"see [[{written}]]", resolver)
            assert note.links[0].resolved == target, (target, style, written)


def test_markdown_links_when_wikilinks_are_off_are_percent_encoded() -> None:
    markup = link_markup("Folder/My (note)", "my note", markdown=True, target_path="Folder/My (note).md")
    assert markup == "[my note](Folder/My%20%28note%29.md)"
    note = parse_note("x.md", f"see {markup}", LinkResolver(["Folder/My (note).md", "x.md"]))
    assert note.links[0].resolved == "Folder/My (note).md"


def test_replacements_must_each_match_exactly_once() -> None:
    assert apply_replacements("a b c", [("b", "B"), ("c", "C")]) == "a B C"
    with pytest.raises(EditMismatch, match="not in the note"):
        apply_replacements("a b c", [("x", "y")])
    with pytest.raises(EditMismatch, match="occurs 2 times"):
        apply_replacements("a a", [("a", "b")])
    with pytest.raises(EditMismatch, match="empty"):
        apply_replacements("a", [("", "b")])


def test_the_diff_marks_a_last_line_without_a_newline_as_git_does() -> None:
    diff = unified_diff("N.md", "one\ntwo", "one\ntwo\nthree\n")
    assert diff.splitlines() == [
        "--- a/N.md",
        "+++ b/N.md",
        "@@ -1,2 +1,3 @@",
        " one",
        "-two",
        "\\ No newline at end of file",
        "+two",
        "+three",
    ]
    assert unified_diff("N.md", "", "new\n", created=True).startswith("--- /dev/null\n+++ b/N.md\n")


def test_a_proposal_round_trips_through_its_stored_form() -> None:
    proposal = Proposal(
        id="0123456789ab",
        kind="link",
        path="A.md",
        base_hash="h",
        before="a",
        after="b",
        source="links",
        device="default",
        created="2026-03-14T09:00:00Z",
        summary="Link",
        link={"target": "B.md"},
        events=({"at": "t", "action": "proposed", "by": "default"},),
    )
    assert Proposal.from_dict({**proposal.to_dict(), "unknown_later_field": 1}) == proposal
