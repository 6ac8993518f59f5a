"""The HTTP API through aiohttp's test client: auth, CORS, Host check, errors, streaming, cancellation."""

import asyncio
import json
import re

import pytest
from openapi_spec_validator import validate

from tests.web_helpers import break_keyword_index, running_app


async def test_health_is_bare_without_a_token_and_detailed_with_one(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        bare = await api.client.get("/v1/health")
        assert bare.status == 200 and await bare.json() == {"status": "ok"}
        detailed = await (await api.get("/v1/health")).json()
        assert detailed["ollama"] == {"host": fake_ollama.url, "reachable": True}
        assert detailed["models"] == {"embed": "fake-embed", "chat": "fake-chat", "missing": []}
        index = detailed["index"]
        assert index["notes"] >= 40 and index["pending"] == 0 and index["dimension"] == 96
        wrong = await api.client.get("/v1/health", headers={"Authorization": "Bearer nope"})
        assert wrong.status == 401


async def test_every_data_endpoint_needs_the_token(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        for method, path in [
            ("GET", "/v1/status"),
            ("POST", "/v1/search"),
            ("POST", "/v1/ask"),
            ("GET", "/v1/related?path=Home.md"),
            ("POST", "/v1/reindex"),
            ("GET", "/v1/events"),
            ("GET", "/v1/openapi.json"),
        ]:
            response = await api.client.request(method, path)
            body = await response.json()
            assert response.status == 401, path
            assert body["error"]["code"] == "unauthorized" and "vask token" in body["error"]["hint"]


async def test_foreign_host_is_refused(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        response = await api.get("/v1/health", headers={"Host": "attacker.example:8765"})
        assert response.status == 403
        assert (await response.json())["error"]["code"] == "forbidden_host"
        ok = await api.get("/v1/health", headers={"Host": "localhost:8765"})
        assert ok.status == 200


async def test_cors_only_for_obsidian(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        preflight = await api.client.options(
            "/v1/ask",
            headers={
                "Origin": "app://obsidian.md",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status == 204
        assert preflight.headers["Access-Control-Allow-Origin"] == "app://obsidian.md"
        assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
        foreign = await api.client.options(
            "/v1/ask", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        )
        assert "Access-Control-Allow-Origin" not in foreign.headers
        streamed = await api.post("/v1/ask", {"question": "sourdough starter"}, headers={"Origin": "app://obsidian.md"})
        assert streamed.headers["Access-Control-Allow-Origin"] == "app://obsidian.md"
        await streamed.read()
        other = await api.post("/v1/search", {"query": "x"}, headers={"Origin": "https://evil.example"})
        assert "Access-Control-Allow-Origin" not in other.headers


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"query": ""}), "'query'"),
        (json.dumps({"query": 5}), "'query'"),
        (json.dumps({"query": "x", "top_k": 0}), "'top_k'"),
        (json.dumps({"query": "x", "top_k": "6"}), "'top_k'"),
        (json.dumps({"query": "x", "min_similarity": 2}), "'min_similarity'"),
        (json.dumps({"query": "x", "filters": {"folders": "Daily"}}), "filters.folders"),
        (json.dumps({"query": "x", "surprise": 1}), "Unknown field"),
    ],
)
async def test_bad_search_requests_get_a_clear_400(fake_ollama, vault, settings_for, body, fragment):
    async with running_app(settings_for(vault)) as api:
        response = await api.post("/v1/search", data=body)
        assert response.status == 400
        error = (await response.json())["error"]
        assert error["code"] == "bad_request" and fragment in error["message"]


async def test_oversized_body_is_413_in_the_error_shape(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        response = await api.post("/v1/search", data=json.dumps({"query": "x" * 2_000_000}))
        assert response.status == 413
        assert (await response.json())["error"]["code"] == "payload_too_large"


async def test_search_hits_have_the_cli_fields_and_respect_filters(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        result = await api.search("sourdough starter feeding", top_k=5)
        assert result["mode"] == "hybrid" and result["hits"]
        for hit in result["hits"]:
            assert {"path", "title", "heading", "line_start", "line_end", "score", "text"} <= set(hit)
            assert (vault / hit["path"]).is_file()
        daily = await api.search("what did I log", top_k=5, filters={"folders": ["Daily"]})
        assert daily["hits"] and all(h["path"].startswith("Daily/") for h in daily["hits"])


async def test_ask_streams_sources_then_tokens_then_done(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        events = await api.ask_events({"question": "How do I feed my sourdough starter?"})
        kinds = [e["type"] for e in events]
        assert kinds[0] == "sources" and kinds[-1] == "done"
        assert set(kinds[1:-1]) == {"token"} and len(kinds) > 3
        done = events[-1]
        assert done["answer"] == "".join(e["text"] for e in events if e["type"] == "token").strip()
        assert done["citations"], done
        for citation in done["citations"]:
            assert set(citation) >= {"title", "path", "heading", "line", "link"}
            assert (vault / citation["path"]).is_file()
            assert citation["link"].split("#")[0] + ".md" == citation["path"]


async def test_citations_that_match_no_source_are_not_shown(fake_ollama, vault, settings_for):
    fake_ollama.fake.chat_reply = "Feed it daily [Made Up Note] and see [Sourdough starter log]."
    async with running_app(settings_for(vault)) as api:
        done = (await api.ask_events({"question": "How do I feed my sourdough starter?"}))[-1]
        # the invented title is dropped, the real one is kept and points at the source it names
        assert [c["path"] for c in done["citations"]] == ["02 Areas/Cooking/Sourdough starter log.md"]
        (citation,) = done["citations"]
        source = next(s for s in done["sources"] if s["path"] == citation["path"])
        assert citation["title"] == source["title"] == "Sourdough starter log"
        assert (citation["link"], citation["line"]) == (source["link"], source["line_start"])


async def test_the_prompt_fits_the_context_window_asked_of_ollama(fake_ollama, vault, settings_for):
    question = {"question": "How do I feed my sourdough starter?", "top_k": 12, "min_similarity": 0.0}
    async with running_app(settings_for(vault)) as api:
        roomy = await api.ask_events(question)
        options = fake_ollama.fake.chat_requests[-1]["options"]
        assert options["num_ctx"] == 8192 and options["num_predict"] == 1024  # the defaults, on every answer
        assert len(roomy[0]["sources"]) == 12 and "notice" not in roomy[0]
    # a window too small for twelve passages: the weakest go, the user is told, and the sources
    # listed are exactly the ones the model was sent
    async with running_app(settings_for(vault, chat_context=2048)) as api:
        tight = await api.ask_events(question)
        sent = fake_ollama.fake.chat_requests[-1]
        assert sent["options"]["num_ctx"] == 2048
        sources = tight[0]["sources"]
        assert 1 <= len(sources) < 12 and "context window of 2048 tokens" in tight[0]["notice"]
        assert [s["title"] for s in sources] == re.findall(r"^Source: (.+)$", sent["messages"][0]["content"], re.M)
        assert sources[0]["path"] == roomy[0]["sources"][0]["path"]  # the best passage stays


async def test_ask_declines_without_calling_the_model(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        events = await api.ask_events({"question": "zebra quantum", "min_similarity": 0.99})
        assert events[-1]["type"] == "done" and events[-1]["declined"] is True
        assert fake_ollama.fake.chat_calls == 0


async def test_follow_up_questions_use_the_history(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        history = [
            {"role": "user", "content": "How do I feed my sourdough starter?"},
            {"role": "assistant", "content": "Feed it daily."},
        ]
        events = await api.ask_events({"question": "and how often?", "history": history})
        assert events[-1]["type"] == "done"
        sent = fake_ollama.fake.chat_requests[-1]["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
        assert "sourdough" in json.dumps(events[0]["sources"]).lower()


async def test_missing_chat_model_ends_the_stream_with_an_error_event(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        events = await api.ask_events({"question": "sourdough starter", "chat_model": "llama9:400b"})
        assert events[0]["type"] == "sources"
        assert events[-1]["type"] == "error" and events[-1]["code"] == "model_missing"
        assert "ollama pull llama9:400b" in events[-1]["hint"]


async def test_search_falls_back_to_keywords_when_ollama_is_down(fake_ollama, vault, settings_for, tmp_path):
    async with running_app(settings_for(vault)):
        pass  # builds the index with the fake
    down = settings_for(vault, ollama_host="http://127.0.0.1:9", ollama_retries=0)
    async with running_app(down, wait=False) as api:
        result = await api.search("sourdough starter")
        assert result["mode"] == "keyword" and result["hits"]
        assert "not reachable" in result["notice"]
        events = await api.ask_events({"question": "sourdough starter"})
        assert events[-1]["type"] == "error" and events[-1]["code"] == "ollama_unavailable"
        assert "ollama serve" in events[-1]["hint"] and "127.0.0.1:9" in events[-1]["message"]


async def test_a_client_that_disconnects_stops_the_generation(fake_ollama, vault, settings_for):
    fake_ollama.fake.chat_reply = "word " * 400
    fake_ollama.fake.token_delay = 0.02
    async with running_app(settings_for(vault)) as api:
        response = await api.post("/v1/ask", {"question": "sourdough starter"})
        first = await response.content.readline()
        assert json.loads(first)["type"] == "sources"
        await response.content.readline()  # a token: generation is under way
        response.close()
        for _ in range(200):
            if fake_ollama.fake.chat_streams_cancelled:
                break
            await asyncio.sleep(0.02)
        assert fake_ollama.fake.chat_streams_cancelled == 1
        assert fake_ollama.fake.chat_streams_completed == 0


async def test_related_and_path_safety(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        response = await api.get("/v1/related", params={"path": "Home.md", "top_k": "5"})
        body = await response.json()
        assert response.status == 200 and len(body["related"]) == 5
        assert all((vault / r["path"]).is_file() and r["path"] != "Home.md" for r in body["related"])
        for bad in ["../outside.md", "/etc/passwd", "Daily/../../x.md"]:
            response = await api.get("/v1/related", params={"path": bad})
            assert response.status == 400, bad
        missing = await api.get("/v1/related", params={"path": "Nope.md"})
        assert missing.status == 404
        traversal = await api.post("/v1/ask", {"question": "x", "current_note": "../../etc/passwd"})
        assert traversal.status == 400


async def test_reindex_is_accepted_and_converges(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        note = vault / "Daily" / "2026-03-14.md"
        note.write_text(note.read_text() + "\nAdded a note about quokkas.\n")
        response = await api.post("/v1/reindex", {"paths": ["Daily/2026-03-14.md"]})
        assert response.status == 202 and (await response.json())["queued"] == 1
        await asyncio.sleep(0.05)
        await api.live.wait_idle()
        hits = (await api.search("quokkas", top_k=3, mode="hybrid"))["hits"]
        assert hits[0]["path"] == "Daily/2026-03-14.md" and "quokkas" in hits[0]["text"]
        everything = await api.post("/v1/reindex", {})
        assert everything.status == 202


async def test_events_stream_starts_with_the_status(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        response = await api.get("/v1/events")
        assert response.headers["Content-Type"].startswith("text/event-stream")
        assert (await response.content.readline()).decode().strip() == "event: status"
        data = json.loads((await response.content.readline()).decode().removeprefix("data: "))
        assert data["state"] == "idle" and data["pending"] == 0 and data["notes"] >= 40
        response.close()


async def test_status_lists_failures_with_reasons(fake_ollama, vault, settings_for):
    (vault / "binary.md").write_bytes(b"\x00\x01\x02")
    async with running_app(settings_for(vault)) as api:
        status = await (await api.get("/v1/status")).json()
        assert status["state"] == "idle" and status["pending"] == 0
        assert status["stage"] is None  # (a sync's steps after its notes: none once idle)
        assert {"path": "binary.md", "reason": "binary file with a .md name"} in status["skipped"]
        # how keyword search cuts text, and why (sample_vault has notes in Chinese and Japanese)
        language = status["language"]
        assert language["keyword_terms"] == "cjk" and language["keyword_sample"]["cjk_notes"] >= 4
        assert language["keyword_reason"].endswith("notes read are written mostly in Chinese or Japanese")


async def test_openapi_document_is_valid_and_covers_every_route(fake_ollama, vault, settings_for):
    async with running_app(settings_for(vault)) as api:
        document = await (await api.get("/v1/openapi.json")).json()
        validate(document)
        routes = {r.resource.canonical for r in api.client.app.router.routes() if r.resource is not None}
        assert routes <= set(document["paths"]), routes - set(document["paths"])


async def test_a_broken_keyword_index_is_said_not_taken_for_no_matches(fake_ollama, vault, settings_for, caplog):
    settings = settings_for(vault)
    async with running_app(settings):
        pass  # builds the index
    await break_keyword_index(settings.resolved_index_dir())
    async with running_app(settings) as api:
        result = await api.search("sourdough starter")
        assert result["mode"] == "hybrid" and result["hits"]  # the vectors still answer, and it says why alone
        assert "keyword search" in result["notice"] and "vask index --full" in result["notice"]
        assert any(r.levelname == "WARNING" and "keyword search" in r.getMessage() for r in caplog.records)
        status = await (await api.get("/v1/status")).json()
        (problem,) = status["store_errors"]
        assert problem["operation"] == "keyword search" and "vask index --full" in problem["hint"]
    down = settings_for(vault, ollama_host="http://127.0.0.1:9", ollama_retries=0)
    async with running_app(down, wait=False) as api:
        result = await api.search("sourdough starter")  # keyword-only, and the keyword index is broken
        assert result["mode"] == "keyword" and result["hits"] == []
        assert "not reachable" in result["notice"] and "keyword search of the index failed" in result["notice"]
        assert "vask index --full" in result["notice"]
    async with running_app(settings) as api:
        await api.live.services.indexer.sync(force=True)  # what `vask index --full` does
        result = await api.search("sourdough starter")
        assert result["hits"] and "notice" not in result
        assert (await (await api.get("/v1/status")).json())["store_errors"] == []


async def test_odd_characters_in_a_query_are_words_not_errors(fake_ollama, vault, settings_for, caplog):
    down = settings_for(vault, ollama_host="http://127.0.0.1:9", ollama_retries=0)
    async with running_app(settings_for(vault)):
        pass
    async with running_app(down, wait=False) as api:
        for query in ['"sourdough', "sourdough AND (starter", "title:sourdough*", "starter~2 ^ \\", "NOT OR"]:
            result = await api.search(query)
            assert "failed" not in result.get("notice", ""), query
        assert (await api.search('"sourdough starter (feeding'))["hits"]
        assert not [r for r in caplog.records if "keyword search of the index failed" in r.getMessage()]
