"""`vask serve` stops cleanly on SIGINT and SIGTERM, and the index it leaves is whole."""

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.reliability.helpers import clean_build, index_fingerprint
from tests.reliability.test_crash import ROOT, start_fake
from vask_server.config import load_settings
from vask_server.services.context import open_services

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_shuts_down_cleanly(vault, tmp_path, sig):
    fake, url = start_fake(delay=0.005)
    try:
        env = {**os.environ, "OLLAMA_HOST": url, "VASK_EMBED_MODEL": "fake-embed", "VASK_CHAT_MODEL": "fake-chat"}
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vask_server.cli",
                "serve",
                "--vault",
                str(vault),
                "--index-dir",
                str(tmp_path / "index"),
                "--port",
                "0",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, line
        base = line.strip().rsplit(" ", 1)[-1]
        assert urllib.request.urlopen(f"{base}/v1/health", timeout=10).status == 200
        time.sleep(0.3)  # mid first sync
        server.send_signal(sig)
        _, err = server.communicate(timeout=20)
        assert server.returncode == 0, err
        assert "shutting down" in err

        # nothing half-written: a later sync completes the index to exactly a clean build
        settings = load_settings(
            env={}, vault=vault, index_dir=tmp_path / "index", ollama_host=url, embed_model="fake-embed"
        )

        async def check() -> None:
            async with open_services(settings) as services:
                await services.indexer.sync()
                assert await index_fingerprint(services) == await clean_build(settings, tmp_path / "clean")

        asyncio.run(check())
    finally:
        fake.terminate()
        fake.wait(10)
