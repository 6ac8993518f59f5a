from vask_server.core.chunk import ChunkOptions, chunk_note
from vask_server.core.parse import parse_note
from vask_server.core.tokens import count_tokens


def chunks_of(text: str, path: str = "Notes/Plan.md", **options: int):
    return chunk_note(parse_note(path, text), ChunkOptions(**options))


def test_heading_path_goes_in_front_of_the_embedded_text():
    text = "# Plan\n\n## Risks\n\n### Legal\n\n" + "Data licences could be revoked by the provider. " * 8
    chunks = chunks_of(text)
    assert len(chunks) == 1
    chunk = chunks[0]
    # "# Plan" atop a note titled "Plan" is not repeated in the path
    assert chunk.heading_path == ("Plan", "Risks", "Legal")
    assert chunk.embed_text.startswith("Plan > Risks > Legal\n\n")
    assert chunk.anchor == "Legal"  # empty "Plan" and "Risks" headings joined the section with content
    assert "### Legal" in chunk.text


def test_sections_split_at_headings_with_exact_lines():
    body = "Words about this section that carry real meaning. " * 12
    text = f"# A\n{body}\n# B\n{body}\n"
    first, second = chunks_of(text)
    assert (first.anchor, first.line_start, first.line_end) == ("A", 1, 2)
    assert (second.anchor, second.line_start, second.line_end) == ("B", 3, 4)


def test_token_budget_and_character_cap_are_respected():
    text = "# Long\n\n" + "\n\n".join(f"Paragraph {i} " + "lorem ipsum dolor sit amet " * 20 for i in range(30))
    chunks = chunks_of(text, max_tokens=120)
    assert len(chunks) > 5
    assert all(count_tokens(c.embed_text) <= 120 for c in chunks)
    url = "https://example.com/" + "x" * 9000
    capped = chunks_of(f"# Links\n\n{url}\n", max_chars=1000)
    assert all(len(c.embed_text) <= 1000 for c in capped)
    assert "".join(c.text for c in capped).replace("\n", "") == url


def test_tiny_sections_are_merged_not_fragments():
    text = "".join(f"## Item {i}\n- [[Note {i}]]\n" for i in range(10))
    chunks = chunks_of(text, path="MOC.md")
    assert len(chunks) == 1
    assert all(f"Note {i}" in chunks[0].text for i in range(10))


def test_tables_stay_whole_when_they_fit_and_repeat_their_header_when_split():
    small = "## Table\n\n| a | b |\n|---|---|\n" + "".join(f"| r{i} | v{i} |\n" for i in range(5))
    (chunk,) = chunks_of(small)
    assert chunk.text.count("| r") == 5
    big = "## Table\n\n| name | value |\n|---|---|\n" + "".join(f"| row {i} | value {i} |\n" for i in range(200))
    pieces = chunks_of(big, max_tokens=120)
    assert len(pieces) > 2
    assert all(p.text.startswith("| name | value |\n|---|---|") for p in pieces)
    assert pieces[1].line_start > pieces[0].line_end  # the repeated header does not count as its lines


def test_hashes_and_ids_are_stable_and_follow_content():
    text = "# A\n" + "Alpha text that matters. " * 20 + "\n# B\n" + "Beta text that matters. " * 20 + "\n"
    before = chunks_of(text)
    again = chunks_of(text)
    assert [c.id for c in before] == [c.id for c in again]
    edited = chunks_of(text.replace("Beta text", "Gamma text"))
    assert before[0].hash == edited[0].hash
    assert before[1].hash != edited[1].hash


def test_code_fence_headings_do_not_split():
    text = "# Setup\n\n```bash\n# install\napt-get install x\n```\n\nMore setup prose here.\n"
    (chunk,) = chunks_of(text)
    assert "# install" in chunk.text


def test_two_thousand_headings():
    text = "".join(f"## H{i}\nline {i}\n" for i in range(2000))
    chunks = chunks_of(text, path="Huge.md")
    assert 10 < len(chunks) < 400
    assert chunks[-1].line_end == 4000
    assert all(count_tokens(c.embed_text) <= 240 for c in chunks)


def test_empty_note_has_no_chunks():
    assert chunks_of("") == []
    assert chunks_of("---\ntitle: x\n---\n") == []


def test_an_empty_heading_splits_but_names_no_section():
    body = "Words about this section that carry real meaning. " * 12
    first, second = chunks_of(f"# Topic\n{body}\n## \n{body}\n", path="Notes/Plan.md")
    assert first.heading_path == ("Plan", "Topic")
    assert second.heading_path == ("Plan", "Topic")  # not ("Plan", "Topic", "")
    assert second.embed_text.startswith("Plan > Topic\n\n") and (second.line_start, second.line_end) == (3, 4)
