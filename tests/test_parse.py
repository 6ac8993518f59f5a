from vask_server.core.links import LinkResolver
from vask_server.core.parse import parse_note

VAULT_FILES = [
    "Projects/Plan.md",
    "Archive/Plan.md",
    "Zettel/Spaced repetition.md",
    "Home.md",
    "attachments/diagram.png",
]


def parse(text: str, path: str = "Projects/Today.md"):
    return parse_note(path, text, LinkResolver(VAULT_FILES))


def test_wikilinks_become_readable_text_and_keep_metadata():
    note = parse(
        "See [[Home]], [[Spaced repetition|SRS]], [[Spaced repetition#Why it works]], "
        "[[Spaced repetition#^forgetting]] and ![[Home]].\n"
    )
    assert note.lines[0] == "See Home, SRS, Spaced repetition — Why it works, Spaced repetition and Home."
    home, alias, heading, block, embed = note.links
    assert home.resolved == "Home.md" and not home.embed
    assert alias.alias == "SRS" and alias.resolved == "Zettel/Spaced repetition.md"
    assert heading.heading == "Why it works"
    assert block.block == "forgetting" and block.heading is None
    assert embed.embed and embed.resolved == "Home.md"


def test_links_resolve_like_obsidian_same_folder_then_shortest_path():
    same_folder = parse("[[Plan]]", path="Projects/Today.md").links[0]
    assert same_folder.resolved == "Projects/Plan.md"
    by_path = parse("[[Archive/Plan]]").links[0]
    assert by_path.resolved == "Archive/Plan.md"
    attachment = parse("![[diagram.png]]").links[0]
    assert attachment.resolved == "attachments/diagram.png"
    missing = parse("[[Someday maybe]]").links[0]
    assert missing.resolved is None and missing.target == "Someday maybe"


def test_markdown_links_and_images_become_their_text():
    note = parse("Read [this essay](https://example.com/x) and ![a chart](chart.png).")
    assert note.lines[0] == "Read this essay and a chart."


def test_title_aliases_and_tags_from_frontmatter_and_body():
    note = parse(
        "---\ntitle: My Plan\naliases: [Big plan, The plan]\ntags: Work, Planning # a YAML comment\n---\n"
        "Body with #Inline/Tag and #2026 and a heading below.\n"
        "## Not #atag in a heading\n"
        "`#code-tag` stays code\n"
        "```\n#fenced-tag\n# not a heading\n```\n"
    )
    assert note.title == "My Plan"
    assert note.aliases == ("Big plan", "The plan")
    assert note.tags == ("work", "planning", "inline/tag")
    assert [h.text for h in note.headings] == ["Not atag in a heading"]
    assert note.body_start == 6


def test_title_falls_back_to_file_name():
    assert parse("text", path="Zettel/202603141020 An idea.md").title == "202603141020 An idea"


def test_invalid_yaml_warns_and_keeps_the_body():
    note = parse("---\n: {\n---\nThe real body survives.\n")
    assert note.warnings and "invalid YAML" in note.warnings[0]
    assert "Projects/Today.md" in note.warnings[0]
    assert note.title == "Today" and note.frontmatter == {}
    assert note.lines[3] == "The real body survives."


def test_frontmatter_that_strict_yaml_rejects_is_read_line_by_line():
    # What people write and YAML refuses: `@` cannot start a plain value, a quoted value with quotes
    # inside, a scalar followed by list items, an unclosed flow list, a value with colons.
    note = parse(
        "---\n"
        "title: Reading: notes: 2024\n"
        "aliases:\n- @ada\n- Ada L.\n"
        'week: "[[<% tp.date("YYYY") %>-W01]]"\n'
        "tags: [reading, history\n"
        "also: Lovelace\n-\n- Countess\n"
        "created: 2024-03-01\n"
        "meta:\n  nested:\n    - not an alias\n"
        "---\n"
        "Body text.\n"
    )
    assert note.title == "Reading: notes: 2024"
    assert note.aliases == ("@ada", "Ada L.")
    assert note.tags == ("reading", "history")
    assert note.frontmatter["week"] == '[[<% tp.date("YYYY") %>-W01]]'
    assert note.frontmatter["also"] == ["Lovelace", "Countess"]
    assert str(note.frontmatter["created"]) == "2024-03-01"
    assert "meta" not in note.frontmatter and "nested" not in note.frontmatter
    assert note.lines[-1] == "Body text." and note.body_start == 16
    (warning,) = note.warnings
    assert "invalid YAML frontmatter" in warning and "line by line" in warning and "aliases" in warning


def test_comments_are_dropped_even_across_lines():
    note = parse("keep %% secret %% this\n<!-- hidden\nstill hidden -->shown\n%%\nall gone\n%%\nend\n")
    assert note.lines[0] == "keep  this"
    assert note.lines[1] == "" and note.lines[2] == "shown"
    assert "all gone" not in "\n".join(note.lines)
    assert note.lines[-1] == "end"


def test_callouts_keep_title_and_text_and_block_ids_are_removed():
    note = parse("> [!warning] Do not deploy on Fridays\n> Last time it broke billing. ^friday\n")
    assert note.lines[0] == "Warning: Do not deploy on Fridays"
    assert note.lines[1] == "Last time it broke billing."


def test_crlf_keeps_line_numbers():
    note = parse("# One\r\nfirst\r\n\r\n## Two\r\nsecond\r\n")
    assert [(h.text, h.line) for h in note.headings] == [("One", 1), ("Two", 4)]
    assert note.lines[4] == "second"


def test_empty_note():
    note = parse("")
    assert note.lines == () and note.headings == () and note.title == "Today"


def test_empty_headings_are_headings_and_do_not_lose_the_note():
    # CommonMark: `#` alone, `## ` and `### ###` are empty headings; so is one whose text renders to
    # nothing (an image without alt text, a comment).
    note = parse("# \nfirst\n##\nsecond\n### ###\n#### ![](chart.png)\n##### %% draft %%\n# Real one #\nlast\n")
    assert [(h.level, h.text, h.line) for h in note.headings] == [
        (1, "", 1),
        (2, "", 3),
        (3, "", 5),
        (4, "", 6),
        (5, "", 7),
        (1, "Real one", 8),
    ]
    assert note.lines[1] == "first" and note.lines[8] == "last"
    assert not note.warnings
