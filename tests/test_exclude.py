"""Which notes are kept out of the index, and by which rule."""

import pytest

from vask_server.core.exclude import Excluder, ExclusionRules, obsidian_filters, opted_out, split_globs


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("Private/therapy.md", "VASK_EXCLUDE Private/**"),
        ("Private/2026/salary.md", "VASK_EXCLUDE Private/**"),
        ("Work/offer.secret.md", "VASK_EXCLUDE **/*.secret.md"),
        ("Journal/Secret diary.md", "VASK_EXCLUDE Journal/Secret*"),
        ("Journal/Public diary.md", None),
        ("Privateer.md", None),
        ("health/Blood tests.md", "Obsidian excluded files Health/"),  # Obsidian ignores case
        ("Archive/2019/old.md", "Obsidian excluded files /^Archive/\\d{4}//"),
        ("Archive/notes.md", None),
    ],
)
def test_globs_and_obsidian_filters_name_the_rule_that_excludes(path, rule):
    excluder = Excluder(
        ExclusionRules(
            globs=("Private/**", "**/*.secret.md", "Journal/Secret*"),
            obsidian=("Health/", "/^Archive/\\d{4}//"),
        )
    )
    assert excluder.rule_for(path) == rule


def test_an_invalid_obsidian_regex_is_reported_not_silently_dropped():
    excluder = Excluder(ExclusionRules(obsidian=("/[unclosed/", "Private/")))
    assert excluder.rule_for("Private/a.md") == "Obsidian excluded files Private/"
    assert len(excluder.problems) == 1 and "[unclosed" in excluder.problems[0]


def test_obsidian_app_json_entries():
    assert obsidian_filters({"userIgnoreFilters": ["Private/", " ", 3, "/x/"]}) == ("Private/", "/x/")
    assert obsidian_filters({"other": 1}) == () and obsidian_filters(None) == ()


@pytest.mark.parametrize(
    ("frontmatter", "out"),
    [
        ({"vask": "exclude"}, True),
        ({"Vask": "Private"}, True),
        ({"vask": False}, True),
        ({"vask": "include"}, False),
        ({"tags": ["vask"]}, False),
        ({}, False),
    ],
)
def test_a_note_can_opt_out_in_its_frontmatter(frontmatter, out):
    assert opted_out(frontmatter) is out


def test_exclude_values_split_on_commas():
    assert split_globs(["Private/**, **/*.secret.md", "Private/**"]) == ("Private/**", "**/*.secret.md")


def test_the_opt_out_is_read_from_the_raw_text_of_a_note_the_parser_fails_on():
    from vask_server.core.exclude import opted_out_text

    assert opted_out_text("---\ntitle: x\nvask: exclude\n---\nbody")
    assert opted_out_text("---\nVask: 'private'\n---\n")
    assert not opted_out_text("---\ntitle: x\n---\nvask: exclude")  # in the body, not the frontmatter
    assert not opted_out_text("vask: exclude\n")
