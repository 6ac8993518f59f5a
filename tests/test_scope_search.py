"""Scope in a question, end to end: [[Note]], #tag and path:Folder through the HTTP API (search and
ask) and the command line, a mention that names nothing, a follow-up, and a scope that does not
hold the answer."""

import json

from tests.web_helpers import running_app
from vask_server.cli.command import main
from vask_server.services.context import open_services

TIDEPOOL = "01 Projects/Launch Tidepool app.md"


async def _tagged(settings, tag: str) -> set[str]:
    """The notes whose own tags (or nested tags) include `tag`, as the manifest records them."""
    async with open_services(settings) as services:
        manifest = await services.store.tables(services.searcher.active()).manifest()
    return {p for p, r in manifest.items() if any(t == tag or t.startswith(tag + "/") for t in r.tags)}


async def test_a_note_mention_limits_every_hit_to_that_note(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        result = await api.search("In [[Launch Tidepool app]], what did we decide about pricing?")
        assert result["scope"] == {"notes": [TIDEPOOL], "tags": [], "folders": []}
        assert result["hits"] and {h["path"] for h in result["hits"]} == {TIDEPOOL}
        # the same question without the mention reaches other notes: the scope did the narrowing
        loose = await api.search("what did we decide about pricing?")
        assert loose["scope"] is None and {h["path"] for h in loose["hits"]} != {TIDEPOOL}
        # the mention was taken out of what was searched: a path or alias resolves the same way
        by_path = await api.search("pricing in [[01 Projects/Launch Tidepool app]]")
        assert by_path["scope"]["notes"] == [TIDEPOOL]


async def test_a_tag_mention_limits_to_tagged_notes_with_nested_tags(fake_ollama, vault, settings_for):
    settings = settings_for(vault)
    async with running_app(settings) as api:
        result = await api.search("what did I try for #health?")
        assert "health/sleep" in result["scope"]["tags"]
        tagged = await _tagged(settings, "health")
        assert result["hits"] and {h["path"] for h in result["hits"]} <= tagged
        running = await api.search("how did the long runs go #running")
        assert running["hits"] and {h["path"] for h in running["hits"]} <= await _tagged(settings, "running")


async def test_a_folder_mention_limits_to_that_folder(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        result = await api.search('what did I learn path:"03 Resources/Books"')
        assert result["scope"]["folders"] == ["03 Resources/Books"]
        assert result["hits"] and all(h["path"].startswith("03 Resources/Books/") for h in result["hits"])


async def test_a_mention_that_names_nothing_is_an_error_with_the_closest_names(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        response = await api.post("/v1/search", {"query": "pricing in [[Launch Tidepol app]]"})
        error = (await response.json())["error"]
        assert response.status == 400 and error["code"] == "scope_not_found"
        assert "[[Launch Tidepol app]]" in error["message"]
        assert error["closest"][0] == "[[Launch Tidepool app]]" and "[[Launch Tidepool app]]" in error["hint"]
        # /v1/ask says so before any answer streams, and no model was asked anything
        chats = len(fake_ollama.fake.chat_requests)
        response = await api.post("/v1/ask", {"question": "what about #runing?"})
        error = (await response.json())["error"]
        assert response.status == 400 and error["code"] == "scope_not_found" and "#running" in error["closest"]
        assert len(fake_ollama.fake.chat_requests) == chats


async def test_each_miss_comes_with_its_own_closest_names(fake_ollama, vault, settings_for):
    # Three mentions that name nothing: a client is told which names go with which, without reading the hint.
    query = 'pricing in [[Launch Tidepol app]] #runing path:"Nowhere Zq"'
    async with running_app(settings_for(vault)) as api:
        response = await api.post("/v1/search", {"query": query})
        error = (await response.json())["error"]
    assert response.status == 400 and error["code"] == "scope_not_found"
    misses = error["misses"]
    assert [(m["kind"], m["written"]) for m in misses] == [
        ("note", "[[Launch Tidepol app]]"),
        ("folder", 'path:"Nowhere Zq"'),
        ("tag", "#runing"),
    ]
    assert misses[0]["closest"][0] == "[[Launch Tidepool app]]" and "#running" in misses[2]["closest"]
    assert not any(name.startswith("#") for name in misses[0]["closest"])
    assert not any(name.startswith("[[") for name in misses[2]["closest"])
    assert misses[1]["closest"] == []  # nothing near: the hint gives advice instead
    # the flat list stays for older clients: every miss's names, in order
    assert error["closest"] == [name for miss in misses for name in miss["closest"]]


async def test_an_answer_carries_its_scope_and_sources_only_from_it(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        events = await api.ask_events({"question": "in [[Launch Tidepool app]], what is the launch plan?"})
        assert events[0]["type"] == "sources" and events[0]["scope"]["notes"] == [TIDEPOOL]
        assert events[0]["sources"] and {s["path"] for s in events[0]["sources"]} == {TIDEPOOL}
        assert events[-1]["type"] == "done" and events[-1]["scope"] == events[0]["scope"]
        # a follow-up that names no scope stays within the previous question's
        history = [
            {"role": "user", "content": "in [[Launch Tidepool app]], what is the launch plan?"},
            {"role": "assistant", "content": events[-1]["answer"]},
        ]
        follow = await api.ask_events({"question": "and what about pricing?", "history": history})
        assert follow[0]["scope"]["notes"] == [TIDEPOOL]
        assert follow[0]["sources"] and {s["path"] for s in follow[0]["sources"]} == {TIDEPOOL}


async def test_a_scope_that_does_not_hold_the_answer_declines(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        # sourdough is all over the cooking notes, and nowhere in the running shoes note
        assert (await api.search("how is my sourdough starter doing?"))["hits"]
        events = await api.ask_events({"question": "in [[Shoe rotation]], how is my sourdough starter doing?"})
        assert events[-1]["type"] == "done" and events[-1]["declined"] is True
        assert events[-1]["scope"]["notes"] == ["02 Areas/Running/Shoe rotation.md"]


def test_the_command_line_prints_the_scope_and_stops_on_a_name_it_cannot_find(cli_env, vault, capsys, monkeypatch):
    monkeypatch.setenv("VASK_VAULT", str(vault))
    assert main(["index", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "pricing in [[Launch Tidepool app]]", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scope"]["notes"] == [TIDEPOOL] and {h["path"] for h in result["hits"]} == {TIDEPOOL}
    assert main(["search", "what did I learn #zettel"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Within #zettel:") and "Zettelkasten/" in out
    assert main(["ask", "pricing in [[Launch Tidepool app]]"]) == 0
    assert "Within [[Launch Tidepool app]]:" in capsys.readouterr().err
    assert main(["search", "pricing in [[Lanch Tidepool]]"]) == 2
    err = capsys.readouterr().err
    assert "No note [[Lanch Tidepool]] in the index." in err and "Closest: [[Launch Tidepool app]]" in err
