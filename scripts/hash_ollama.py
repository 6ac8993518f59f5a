"""A fast HTTP stand-in for the Ollama stand-in's `hash-embed` and `hash-embed-1024`, for the large-vault benchmarks.

`../shared/ollama-shim` makes hash-embed's vectors in pure Python: a first sync of 100,000 notes
through it takes over an hour here. This server speaks the part of Ollama's API vask uses for
embedding (`/api/tags`, `/api/show`, `/api/embed`) and makes the same vectors with
`scripts.benchkit.LocalHashEmbedder`, in its own process. So `vask index` and `vask serve` run as a
user runs them, embedding over HTTP, and their memory is theirs alone (the embedder's feature
cache lives here, not in the process measured).

    uv run python -m scripts.hash_ollama --port 11620
    uv run python -m scripts.hash_ollama --port 11620 --rate 40   # a laptop CPU's pace: 40 texts/s

`--rate` makes it as slow as a real model on a laptop's CPU (texts a second, one request at a time,
as Ollama serves one embedding model), for the first-hour benchmark (scripts/bench_first_hour.py).
"""

from __future__ import annotations

import argparse
import asyncio

from aiohttp import web

from scripts.benchkit import DIMENSIONS, LocalHashEmbedder, hash_model


def _model(body: dict[str, object]) -> str:
    return str(body.get("model") or body.get("name") or "").removesuffix(":latest")


def make_app(rate: float | None = None) -> web.Application:
    # hash-embed (384) and hash-embed-1024, as the stand-in serves them: the same vectors
    embedders = {hash_model(d): LocalHashEmbedder(d) for d in DIMENSIONS}
    busy = asyncio.Lock()  # (one request at a time, as one Ollama model)
    counts = {"embed_calls": 0, "embed_inputs": 0}

    def missing(model: str) -> web.Response:
        return web.json_response({"error": f"model '{model}' not found, try pulling it first"}, status=404)

    async def root(_: web.Request) -> web.Response:
        return web.Response(text="Ollama is running")

    async def version(_: web.Request) -> web.Response:
        return web.json_response({"version": "0.12.0-hash"})

    async def tags(_: web.Request) -> web.Response:
        names = [f"{model}:latest" for model in embedders]
        return web.json_response({"models": [{"name": n, "model": n, "size": 1, "digest": "0"} for n in names]})

    async def show(request: web.Request) -> web.Response:
        model = _model(await request.json())
        if model not in embedders:
            return missing(model)
        info = {"general.architecture": "bert", "bert.embedding_length": int(await embedders[model].dimension())}
        return web.json_response({"modelfile": "", "model_info": info, "capabilities": ["embedding"]})

    async def embed(request: web.Request) -> web.Response:
        body = await request.json()
        model = _model(body)
        if model not in embedders:
            return missing(model)
        embedder = embedders[model]
        inputs = body.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else [str(t) for t in inputs]
        counts["embed_calls"] += 1
        counts["embed_inputs"] += len(texts)
        if rate:
            async with busy:
                await asyncio.sleep(len(texts) / rate)
                vectors = await embedder.embed(texts)
        else:
            vectors = await embedder.embed(texts)
        return web.json_response({"model": model, "embeddings": vectors.tolist()})

    async def stats(_: web.Request) -> web.Response:
        return web.json_response(counts)

    async def running(_: web.Request) -> web.Response:
        return web.json_response({"models": []})

    app = web.Application(client_max_size=64 * 2**20)
    app.router.add_get("/", root)
    app.router.add_get("/api/version", version)
    app.router.add_get("/api/tags", tags)
    app.router.add_get("/api/ps", running)
    app.router.add_post("/api/show", show)
    app.router.add_post("/api/embed", embed)
    app.router.add_get("/shim/stats", stats)  # (what scripts.bench reads, as of the stand-in)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=11620)
    parser.add_argument("--rate", type=float, default=None, help="embed at most this many texts a second")
    args = parser.parse_args()
    # (127.0.0.1 only: a benchmark's stand-in, never reachable from elsewhere)
    asyncio.run(_serve(args.port, args.rate))


async def _serve(port: int, rate: float | None = None) -> None:
    runner = web.AppRunner(make_app(rate), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print(f"hash-embed, hash-embed-1024 on http://127.0.0.1:{port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    main()
