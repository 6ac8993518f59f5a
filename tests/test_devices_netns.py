"""One server, several devices, across real network namespaces.

`vask serve` runs in one namespace over HTTPS (a certificate from a CA this test makes), clients in
a second, joined to it by a veth pair, and the fake Ollama in a third, over HTTPS too, behind a
header a reverse proxy would want. The client namespace has no route to Ollama's. Clients: a small
standard-library agent (tests/netns_agent.py) and the plugin's own client library under Node, in
both transports. Skipped, with the reason, where namespaces cannot be made (not root, no `ip`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fake_ollama import CHAT_MODEL, EMBED_MODEL
from tests.netns import Certificates, Topology, make_certificates, netns_available, random_networks
from vask_server.cli.command import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "obsidian-plugin"
PORT = 8765
OLLAMA_PORT = 11434
PROXY_HEADER = ("X-Proxy-Auth", "s3cret-proxy-value-42")
QUESTION = "What temperature do I bake the sourdough at?"
WHY_NOT = netns_available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"network namespaces unavailable: {WHY_NOT}")


class Lines:
    """A child's stdout, line by line, readable with a time limit."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.queue.put(line)

    def wait_for(self, fragment: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.queue.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if fragment in line:
                return line
        raise AssertionError(f"no {fragment!r} from {self.process.args} (exit {self.process.poll()})")


class Agent:
    """tests/netns_agent.py inside the client namespace."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, bufsize=1
        )

    def __call__(self, **cmd: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"op": "request", **cmd}) + "\n")
        self.process.stdin.flush()
        result: dict[str, Any] = json.loads(self.process.stdout.readline())
        return result

    def raw(self, host: str, port: int, send: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"op": "raw", "host": host, "port": port, "send": send}) + "\n")
        self.process.stdin.flush()
        result: dict[str, Any] = json.loads(self.process.stdout.readline())
        return result


@dataclass
class Remote:
    topology: Topology
    certs: Certificates
    server_ip: str
    client_ip: str
    ollama_ip: str
    index_dir: Path
    vault: Path
    log: Path
    tokens: dict[str, str]
    agent: Agent
    url: str
    hold_dir: Path  # the fake Ollama holds a chat stream after its first token while `hold` is in it
    figures: dict[str, Any] = field(default_factory=dict)

    def get(self, path: str, device: str | None = None, **extra: Any) -> dict[str, Any]:
        headers = dict(extra.pop("headers", {}))
        if device:
            headers["Authorization"] = f"Bearer {self.tokens[device]}"
        return self.agent(method="GET", url=self.url + path, headers=headers, ca=str(self.certs.ca), **extra)

    def post(self, path: str, body: Any, device: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.tokens[device]}"}
        return self.agent(method="POST", url=self.url + path, headers=headers, body=body, ca=str(self.certs.ca))


def vask_cli(*args: str, index_dir: Path, vault: Path) -> str:
    """`vask token ...`, in this process (it touches only files; a new Python each time is slow)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main([*args, "--vault", str(vault), "--index-dir", str(index_dir)])
    assert code == 0, out.getvalue()
    return out.getvalue()


def write_vault(root: Path) -> None:
    root.mkdir()
    (root / "Sourdough.md").write_text(
        "# Sourdough\n\nFeed the starter at 1:5:5 the night before. Bake the sourdough at 250 C with the lid "
        "on for twenty minutes, then uncovered until the crust is dark.\n",
        encoding="utf-8",
    )
    (root / "Running.md").write_text("# Running\n\nEasy runs at conversational pace, one long run on Sunday.\n")
    (root / "Garden.md").write_text("# Garden\n\nTomatoes go out after the last frost, in the sunny bed.\n")


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    started = time.perf_counter()
    tmp = tmp_path_factory.mktemp("devices")
    topology = Topology()
    children: list[subprocess.Popen[Any]] = []
    try:
        for role in ("server", "client", "ollama"):
            topology.add(role)
        front, back = random_networks(2)
        to_clients = topology.link("server", "client", front)
        to_ollama = topology.link("server", "ollama", back)
        server_ip, client_ip, ollama_ip = to_clients.a_address, to_clients.b_address, to_ollama.b_address
        certs = make_certificates(tmp, [server_ip, "vask.test"], [ollama_ip])

        ollama = subprocess.Popen(
            topology.command(
                "ollama",
                [
                    sys.executable,
                    "-m",
                    "tests.fake_ollama",
                    "--host",
                    ollama_ip,
                    "--port",
                    str(OLLAMA_PORT),
                    "--tls-cert",
                    str(certs.ollama_cert),
                    "--tls-key",
                    str(certs.ollama_key),
                    "--require-header",
                    f"{PROXY_HEADER[0]}: {PROXY_HEADER[1]}",
                    "--token-delay",
                    "0.03",
                    "--hold-dir",
                    str(tmp),
                ],
            ),
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        children.append(ollama)
        ollama_lines = Lines(ollama)
        phases: dict[str, float] = {"namespaces_and_certs_s": time.perf_counter() - started}

        vault, index_dir = tmp / "vault", tmp / "index"
        write_vault(vault)
        tokens = {"default": vask_cli("token", index_dir=index_dir, vault=vault).strip()}
        for device in ("laptop", "phone"):
            tokens[device] = vask_cli("token", "add", device, index_dir=index_dir, vault=vault).splitlines()[-1]

        log = tmp / "server.log"
        env = {
            **os.environ,
            "SSL_CERT_FILE": str(certs.ca),  # the server trusts Ollama's certificate through the test's CA
            "OLLAMA_HOST": f"https://{ollama_ip}:{OLLAMA_PORT}",
            "VASK_OLLAMA_HEADERS": f"{PROXY_HEADER[0]}: {PROXY_HEADER[1]}",
            "VASK_EMBED_MODEL": EMBED_MODEL,
            "VASK_CHAT_MODEL": CHAT_MODEL,
            "VASK_OLLAMA_RETRIES": "1",
            "VASK_LOG_LEVEL": "info",
        }
        with log.open("w") as log_file:
            server = subprocess.Popen(
                topology.command(
                    "server",
                    [
                        sys.executable,
                        "-m",
                        "vask_server.cli",
                        "serve",
                        "--vault",
                        str(vault),
                        "--index-dir",
                        str(index_dir),
                        "--host",
                        server_ip,
                        "--port",
                        str(PORT),
                        "--allow-remote",
                        "--tls-cert",
                        str(certs.server_cert),
                        "--tls-key",
                        str(certs.server_key),
                        "--allowed-hosts",
                        "vask.test",
                    ],
                ),
                stdout=subprocess.PIPE,
                stderr=log_file,
                text=True,
                cwd=ROOT,
                env=env,
            )
        children.append(server)
        ollama_lines.wait_for("listening on https://", 30)
        phases["ollama_up_s"] = time.perf_counter() - started
        Lines(server).wait_for(f"listening on https://{server_ip}:{PORT}", 60)
        phases["server_listening_s"] = time.perf_counter() - started

        agent = Agent(topology.command("client", [sys.executable, "-m", "tests.netns_agent"]))
        children.append(agent.process)
        url = f"https://{server_ip}:{PORT}"
        result = Remote(
            topology, certs, server_ip, client_ip, ollama_ip, index_dir, vault, log, tokens, agent, url, hold_dir=tmp
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            health = result.get("/v1/health", "laptop")
            if health.get("status") == 200:
                index = json.loads(health["body"])["index"]
                if index["notes"] == 3 and index["pending"] == 0:
                    break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the server did not index the vault: {health}")
        phases["indexed_s"] = time.perf_counter() - started
        result.figures.update({name: round(value, 2) for name, value in phases.items()})
        yield result
    finally:
        for child in reversed(children):
            child.terminate()
        for child in children:
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
        left = topology.close()
        assert not left, f"namespaces left behind: {left}"


def test_tls_is_verified_against_the_test_ca_and_plain_http_gets_no_data(remote: Remote) -> None:
    ok = remote.get("/v1/health")
    assert ok["status"] == 200 and json.loads(ok["body"]) == {"status": "ok"}
    by_name = remote.get("/v1/health", headers={"Host": "vask.test"})  # a name in --allowed-hosts
    assert by_name["status"] == 200
    untrusted = remote.agent(method="GET", url=remote.url + "/v1/health", ca=None)  # the system's CAs only
    assert untrusted.get("kind") == "SSLCertVerificationError", untrusted
    plain = remote.agent(
        method="GET",
        url=f"http://{remote.server_ip}:{PORT}/v1/status",
        headers={"Authorization": f"Bearer {remote.tokens['laptop']}"},
    )
    assert "status" not in plain, plain  # no HTTP answer at all
    raw = remote.agent.raw(
        remote.server_ip,
        PORT,
        f"GET /v1/status HTTP/1.1\r\nHost: {remote.server_ip}\r\n"
        f"Authorization: Bearer {remote.tokens['laptop']}\r\n\r\n",
    )
    assert "HTTP/" not in raw["received"] and "notes" not in raw["received"], raw
    remote.figures["plain_http_bytes_back"] = raw["count"]
    foreign = remote.get("/v1/health", headers={"Host": "evil.example"})
    assert foreign["status"] == 403 and "forbidden_host" in foreign["body"]
    # the client namespace has no way to Ollama's: the server alone talks to it
    hidden = remote.agent(
        method="GET", url=f"https://{remote.ollama_ip}:{OLLAMA_PORT}/api/tags", ca=str(remote.certs.ca)
    )
    assert "error" in hidden, hidden


def test_device_tokens_wrong_and_revoked_ones_get_401_at_once(remote: Remote) -> None:
    for device in ("default", "laptop", "phone"):
        assert remote.get("/v1/status", device)["status"] == 200, device
    wrong = remote.get("/v1/status", headers={"Authorization": "Bearer not-a-device-token"})
    assert wrong["status"] == 401 and "unauthorized" in wrong["body"]
    listed = json.loads(vask_cli("token", "list", "--json", index_dir=remote.index_dir, vault=remote.vault))
    used = {row["name"]: row["last_used"] for row in listed["devices"]}
    assert set(used) == {"default", "laptop", "phone"} and all(used.values()), used
    assert not any(token in json.dumps(listed) for token in remote.tokens.values())

    vask_cli("token", "revoke", "phone", index_dir=remote.index_dir, vault=remote.vault)
    revoked_at = time.perf_counter()
    refused = remote.get("/v1/status", "phone")  # the very next request
    remote.figures["revoked_to_401_ms"] = round((time.perf_counter() - revoked_at) * 1000, 1)
    assert refused["status"] == 401, refused
    assert remote.get("/v1/status", "laptop")["status"] == 200
    assert remote.get("/v1/status", "default")["status"] == 200


def test_cors_answers_obsidian_mobile(remote: Remote) -> None:
    for origin in ("capacitor://localhost", "http://localhost", "app://obsidian.md"):
        preflight = remote.agent(
            method="OPTIONS",
            url=remote.url + "/v1/ask",
            ca=str(remote.certs.ca),
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight["status"] == 204, preflight
        assert preflight["headers"]["Access-Control-Allow-Origin"] == origin
        assert "Authorization" in preflight["headers"]["Access-Control-Allow-Headers"]
    other = remote.agent(
        method="OPTIONS",
        url=remote.url + "/v1/ask",
        ca=str(remote.certs.ca),
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert other["status"] == 403 and "Access-Control-Allow-Origin" not in other["headers"]


def test_an_answer_crosses_three_namespaces_with_ollama_over_https_behind_a_proxy_header(remote: Remote) -> None:
    answer = remote.post("/v1/ask", {"question": QUESTION}, "laptop")
    assert answer["status"] == 200, answer
    events = [json.loads(line) for line in answer["body"].splitlines() if line.strip()]
    done = events[-1]
    assert done["type"] == "done", events[-1]
    assert "250 C" in done["answer"] and done["sources"][0]["path"] == "Sourdough.md"


def _node_bundle(tmp: Path) -> Path:
    esbuild = PLUGIN / "node_modules" / ".bin" / "esbuild"
    if shutil.which("node") is None or not esbuild.exists():
        pytest.skip("Node.js or the plugin's npm dependencies are missing (cd obsidian-plugin && npm ci)")
    out = tmp / "run-client.mjs"
    subprocess.run(
        [str(esbuild), "test/netns/run-client.ts", "--bundle", "--platform=node", "--format=esm", f"--outfile={out}"],
        cwd=PLUGIN,
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out


def _node(
    remote: Remote, bundle: Path, transport: str, device: str, *, trust: bool = True, release: Path | None = None
) -> dict[str, Any]:
    """`release`: a file the client makes when the answer's first token reaches it."""
    env = {k: v for k, v in os.environ.items() if k != "NODE_EXTRA_CA_CERTS"}
    if trust:
        env["NODE_EXTRA_CA_CERTS"] = str(remote.certs.ca)
    args = {"baseUrl": remote.url, "token": remote.tokens[device], "question": QUESTION, "transport": transport}
    if release is not None:
        args["releaseFile"] = str(release)
    done = subprocess.run(
        remote.topology.command("client", ["node", str(bundle), json.dumps(args)]),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_plugin_client_asks_across_namespaces_streaming_and_buffered(remote: Remote, tmp_path: Path) -> None:
    bundle = _node_bundle(tmp_path)
    # The fake holds the answer after its first token until the client says that token reached it: streamed,
    # the client sees it while the rest is held back (ordered by the test, not timed)
    (remote.hold_dir / "hold").touch()
    streamed = _node(remote, bundle, "streaming", "laptop", release=remote.hold_dir / "release")
    assert (remote.hold_dir / "outcome").read_text() == "released", streamed
    assert streamed["connection"]["ok"] and streamed["connection"]["kind"] == "streaming", streamed
    assert streamed["kind"] == "streaming" and "250 C" in streamed["answer"], streamed
    assert streamed["sources"][0] == "Sourdough.md" and streamed["citations"] >= 1
    assert streamed["notice"] is None
    assert streamed["tokens"] >= 5 and streamed["released"] is True and streamed["deliveries"] > 1, streamed

    buffered = _node(remote, bundle, "buffered", "laptop")
    assert buffered["connection"]["ok"] and buffered["kind"] == "buffered", buffered
    assert buffered["answer"] == streamed["answer"] and buffered["sources"] == streamed["sources"]
    assert buffered["tokens"] == streamed["tokens"]
    assert buffered["deliveries"] == 1, buffered  # every event handed on at once, when the whole body came
    assert "arrive whole" in buffered["notice"]

    # fetch blocked (as CORS or a web view's certificate rules can): the client picks requestUrl itself
    auto = _node(remote, bundle, "auto-no-fetch", "default")
    assert auto["kind"] == "buffered" and auto["answer"] == streamed["answer"], auto

    revoked = _node(remote, bundle, "buffered", "phone")  # revoked by the test above
    assert revoked["connection"]["code"] == "unauthorized", revoked
    assert any("revoked" in line for line in revoked["connection"]["lines"])

    untrusted = _node(remote, bundle, "streaming", "laptop", trust=False)
    assert untrusted["connection"]["code"] == "tls_untrusted", untrusted
    assert any("does not trust the server's certificate" in line for line in untrusted["connection"]["lines"])
    remote.figures.update(
        streaming_first_token_ms=round(streamed["first_token_ms"]),
        streaming_done_ms=round(streamed["done_ms"]),
        buffered_first_token_ms=round(buffered["first_token_ms"]),
        buffered_done_ms=round(buffered["done_ms"]),
        tokens=streamed["tokens"],
    )


def test_failed_token_checks_are_limited_per_address_and_logged_without_the_token(remote: Remote) -> None:
    """Last: it leaves the client's address blocked for a minute."""
    guesses: list[int] = []
    while 429 not in guesses and len(guesses) < 21:  # (the tests above spent a few of the 20 already)
        guesses.append(
            remote.get("/v1/status", headers={"Authorization": f"Bearer guess-{len(guesses):02d}-x"})["status"]
        )
    assert set(guesses[:-1]) == {401} and guesses[-1] == 429, guesses
    blocked = remote.get("/v1/status", "laptop")  # the right token too, while it lasts
    assert blocked["status"] == 429 and int(blocked["headers"]["Retry-After"]) > 0, blocked
    log = remote.log.read_text()
    assert f"from {remote.client_ip}" in log and "refused for a while" in log
    for secret in (*remote.tokens.values(), "guess-03-x", PROXY_HEADER[1]):
        assert secret not in log
    remote.figures["log_lines"] = len(log.splitlines())
    print("\nnetns figures:", json.dumps(remote.figures))
