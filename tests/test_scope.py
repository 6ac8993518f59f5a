"""Scope in a question: [[Note]], #tag and path:Folder, found, taken out of the text and resolved."""

from vask_server.core.scope import Directory, find_mentions, resolve

DIRECTORY = Directory(
    notes=["01 Projects/Launch Tidepool app.md", "01 Projects/Ideas.md", "04 Archive/Ideas.md", "Daily/2026-02-14.md"],
    tags=["project", "project/tidepool", "running", "daily"],
)


def test_mentions_are_taken_out_of_the_text_with_the_word_that_introduced_them():
    mentions, text = find_mentions("In [[Launch Tidepool app]], what did we decide about pricing for #project?")
    assert [(m.kind, m.value) for m in mentions] == [("note", "Launch Tidepool app"), ("tag", "project")]
    assert text == "what did we decide about pricing?"
    mentions, text = find_mentions('what did I log path:"01 Projects" last week')
    assert [(m.kind, m.value) for m in mentions] == [("folder", "01 Projects")] and text == "what did I log last week"


def test_a_question_without_mentions_is_left_as_asked():
    assert find_mentions("What's the #1 thing I learned?") == ([], "What's the #1 thing I learned?")


def test_resolved_against_the_index_with_nested_tags_and_same_named_notes():
    mentions, _ = find_mentions('[[Ideas]] #project path:"01 Projects"')
    scope, unmatched = resolve(mentions, DIRECTORY)
    assert unmatched == []
    assert scope.notes == ("01 Projects/Ideas.md", "04 Archive/Ideas.md")
    assert scope.tags == ("project", "project/tidepool") and scope.folders == ("01 Projects",)


def test_a_mention_that_matches_nothing_names_the_closest():
    mentions, _ = find_mentions("in [[Lanch Tidepool ap]] and #runing")
    scope, unmatched = resolve(mentions, DIRECTORY)
    assert scope.is_empty()
    assert [u.message() for u in unmatched] == [
        "No note [[Lanch Tidepool ap]] in the index.",
        "No tag #runing in the index.",
    ]
    assert unmatched[0].hint() == "Closest: [[Launch Tidepool app]]." and unmatched[1].hint() == "Closest: #running."


def test_boards_and_pdfs_are_named_with_their_extension_as_obsidian_links_them():
    directory = Directory(notes=["01 Projects/Roadmap.canvas", "Docs/Handbook.pdf", "Roadmap.md"], tags=[])
    scope, unmatched = resolve(find_mentions("in [[Roadmap.canvas]] and [[Docs/Handbook.pdf]]?")[0], directory)
    assert unmatched == [] and scope.notes == ("01 Projects/Roadmap.canvas", "Docs/Handbook.pdf")
    assert resolve(find_mentions("[[Roadmap]]")[0], directory)[0].notes == ("Roadmap.md",)
