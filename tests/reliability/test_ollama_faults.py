"""The model server down at start, going down mid-index, failing intermittently, or very slow: nothing
lost, the index catches up by itself, and the server keeps answering meanwhile. Every test runs twice:
through Ollama's API, and through the OpenAI-compatible one (the same fake serves both)."""

import asyncio
import shutil
import sys
import time

import pytest

import vask_server.services.sync.indexer as indexer_module
from tests.reliability.helpers import clean_build, index_fingerprint, indexed_notes_have_their_vectors
from tests.web_helpers import running_app
from vask_server.config import load_settings
from vask_server.errors import OllamaUnavailable
from vask_server.services.context import open_services

pytestmark = pytest.mark.reliability
PROVIDER = "ollama"  # set for each test by the fixture below


@pytest.fixture(params=["ollama", "openai"], autouse=True)
def provider(request, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "PROVIDER", request.param)
    return request.param


def settings(vault, index_dir, url, **extra):
    if PROVIDER == "openai":
        extra = {"provider": "openai", "openai_base_url": f"{url}/v1", **extra}
    values = {
        "vault": vault,
        "index_dir": index_dir,
        "ollama_host": url,
        "embed_model": "fake-embed",
        "chat_model": "fake-chat",
        "ollama_retries": 2,
        "debounce_ms": 50,
        **extra,
    }
    return load_settings(env={}, **values)


async def wait_for(condition, timeout=30.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_down_at_start_keyword_search_meanwhile_then_catches_up(switchable_ollama, vault, tmp_path):
    config = settings(vault, tmp_path / "index", switchable_ollama.url)
    async with open_services(config) as services:
        await services.indexer.sync()
    # while the server is stopped, notes change; then it starts with Ollama down
    (vault / "Daily" / "2026-03-14.md").write_text("# 14 March\n\nBought a kayak called Marmalade.\n")
    switchable_ollama.stop()
    async with running_app(config, watch=True, wait=False) as api:
        await wait_for(lambda: api.live.state == "error", what="error state")
        assert api.live.last_error is not None and api.live.last_error.code == "ollama_unavailable"
        health = await (await api.get("/v1/health")).json()
        assert health["ollama"]["reachable"] is False and health["index"]["pending"] >= 1
        events = await api.get("/v1/events")
        await events.content.readline()
        status_event = (await events.content.readline()).decode()
        assert '"reachable": false' in status_event
        events.close()
        result = await api.search("sourdough starter")
        assert result["mode"] == "keyword" and result["hits"]  # still answering
        ask = await api.ask_events({"question": "sourdough starter"})
        assert ask[-1]["type"] == "error" and ask[-1]["code"] == "ollama_unavailable"

        switchable_ollama.start()  # Ollama is back: the worker's retry picks the work up by itself
        await wait_for(lambda: api.live.state == "idle" and api.live.pending == 0, timeout=40, what="catch-up")
        hits = (await api.search("kayak Marmalade"))["hits"]
        assert hits[0]["path"] == "Daily/2026-03-14.md"
        assert (await index_fingerprint(api.live.services)) == await clean_build(config, tmp_path / "clean")


async def test_going_down_mid_index_loses_nothing(switchable_ollama, vault, tmp_path, monkeypatch):
    for copy in ("A", "B"):  # enough notes for several write batches
        shutil.copytree(vault / "03 Resources", vault / copy)
    # Appends as small as a large vault's are, relative to it: the first batch is written on its own
    monkeypatch.setattr(indexer_module, "_ROWS_PER_WRITE", 50)
    switchable_ollama.fake.delay = 0.02
    config = settings(
        vault, tmp_path / "index", switchable_ollama.url, embed_batch_size=4, embed_concurrency=1, ollama_retries=1
    )
    async with open_services(config) as services:
        task = asyncio.create_task(services.indexer.sync())
        target = None
        written = 0
        while not task.done():
            building = services.store.read_meta().building
            if building is not None:
                target = building
                written = len(await services.store.tables(target).manifest())
                if written:
                    break
            await asyncio.sleep(0.02)
        await asyncio.to_thread(switchable_ollama.stop)  # mid-index: some notes written, others not
        with pytest.raises(OllamaUnavailable):
            await task
        assert target is not None and written > 0
        await indexed_notes_have_their_vectors(services)
        assert services.store.read_meta().active is None  # an incomplete first build is never active
        switchable_ollama.start()
        switchable_ollama.fake.delay = 0
        await services.indexer.sync()
        assert await index_fingerprint(services) == await clean_build(config, tmp_path / "clean")


async def test_intermittent_500s_are_retried(switchable_ollama, vault, tmp_path):
    switchable_ollama.fake.fail_rate = 0.3
    config = settings(vault, tmp_path / "index", switchable_ollama.url, ollama_retries=8, embed_batch_size=8)
    async with open_services(config) as services:
        report = await services.indexer.sync()
        assert report.changed >= 60 and not report.failed
        failures = switchable_ollama.fake.failures
        assert failures >= 5  # the faults really happened
        switchable_ollama.fake.fail_rate = 0
        fingerprint = await index_fingerprint(services)
    assert fingerprint == await clean_build(config, tmp_path / "clean")


async def test_very_slow_responses_time_out_and_are_retried(switchable_ollama, small_vault, tmp_path, caplog):
    """Two calls that take longer than VASK_OLLAMA_TIMEOUT are given up on and retried: the log says each
    was abandoned for its timeout (counted, not timed, so a slow machine cannot fail it)."""
    caplog.set_level("WARNING")
    switchable_ollama.fake.slow_next = 2
    switchable_ollama.fake.slow_seconds = 2.0
    config = settings(small_vault, tmp_path / "index", switchable_ollama.url, ollama_timeout=0.5, ollama_retries=4)
    async with open_services(config) as services:
        report = await services.indexer.sync()
    assert report.chunks_embedded > 0 and not report.failed
    assert switchable_ollama.fake.slow_next == 0  # (both slow answers were asked for)
    timed_out = [r for r in caplog.records if "failed (ReadTimeout); retry" in r.getMessage()]
    assert len(timed_out) >= 2, [r.getMessage() for r in caplog.records]


async def test_the_events_say_ollama_is_down_when_it_goes_down_with_nothing_to_sync(
    switchable_ollama, vault, tmp_path, monkeypatch
):
    """`ollama.reachable` is what Ollama does now, not whether the last sync failed: an idle server
    asks it when no request has for a while, and says so when it goes down and when it is back."""
    import vask_server.services.sync.live as live_module

    monkeypatch.setattr(live_module, "OLLAMA_CHECK_EVERY", 0.3)
    monkeypatch.setattr(live_module, "OLLAMA_CHECK_WHILE_DOWN", 0.2)
    config = settings(vault, tmp_path / "index", switchable_ollama.url)
    async with running_app(config, watch=False) as api:
        await api.live.wait_idle(60)
        assert api.live.snapshot()["ollama"] == {"reachable": True}
        queue = api.live.subscribe()
        switchable_ollama.stop()  # nothing changes in the vault: no sync will fail to say it
        while (await asyncio.wait_for(queue.get(), 10))["ollama"]["reachable"] is not False:
            pass
        assert api.live.state == "idle" and api.live.last_error is None
        switchable_ollama.start()
        while (await asyncio.wait_for(queue.get(), 10))["ollama"]["reachable"] is not True:
            pass
        api.live.unsubscribe(queue)
