"""A running vask app for tests: aiohttp's test server around the real app factory."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import lancedb
from aiohttp.test_utils import TestClient, TestServer

from vask_server.adapters.meta import read_meta
from vask_server.config import Settings
from vask_server.core.ratelimit import FailureLimiter
from vask_server.services.sync.live import LiveIndex
from vask_server.web.app import AsgiMount, create_app
from vask_server.web.keys import LIVE

TOKEN = "test-token-0123456789"


class Api:
    def __init__(self, client: TestClient[Any, Any]) -> None:
        self.client = client
        self.auth = {"Authorization": f"Bearer {TOKEN}"}

    @property
    def live(self) -> LiveIndex:
        return self.client.app[LIVE]  # type: ignore[index]

    async def get(self, path: str, **kwargs: Any) -> Any:
        headers = {**self.auth, **kwargs.pop("headers", {})}
        return await self.client.get(path, headers=headers, **kwargs)

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        headers = {**self.auth, **kwargs.pop("headers", {})}
        data = kwargs.pop("data", None)
        if data is None and body is not None:
            data = json.dumps(body)
        return await self.client.post(path, data=data, headers=headers, **kwargs)

    async def search(self, query: str, **extra: Any) -> dict[str, Any]:
        response = await self.post("/v1/search", {"query": query, **extra})
        assert response.status == 200, await response.text()
        result: dict[str, Any] = await response.json()
        return result

    async def ask_events(self, body: dict[str, Any], **kwargs: Any) -> list[dict[str, Any]]:
        response = await self.post("/v1/ask", body, **kwargs)
        assert response.status == 200, await response.text()
        assert response.headers["Content-Type"].startswith("application/x-ndjson")
        text = await response.text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@asynccontextmanager
async def running_app(
    settings: Settings,
    *,
    watch: bool = False,
    wait: bool = True,
    mounts: Sequence[AsgiMount] = (),
    limiter: FailureLimiter | None = None,
) -> AsyncIterator[Api]:
    app = create_app(settings, watch=watch, token=TOKEN, mounts=mounts, limiter=limiter)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        api = Api(client)
        if wait:
            await api.live.wait_idle(60)
        yield api


async def break_keyword_index(index_dir: Path) -> None:
    """Deletes the files of the chunks table's full-text index, as a disk fault or a sync tool might."""
    suffix = read_meta(index_dir).searched().suffix
    table = await (await lancedb.connect_async(str(index_dir / "lancedb"))).open_table(f"chunks_{suffix}")
    (fts,) = [index for index in await table.list_indices() if index.index_type == "FTS"]
    shutil.rmtree(index_dir / "lancedb" / f"chunks_{suffix}.lance" / "_indices" / fts.index_uuid)
