"""A model server's error, said in vask's own words.

A server's error body is never repeated: servers built on pydantic (vLLM, LiteLLM, many proxies) put
the request's input into their validation errors, and the input is the notes' text or the question.
What a message, a log line or `/v1/status` may carry is the status code, the server, and a fixed
phrase for the few errors recognised here; anything else is the status code alone.
"""

from __future__ import annotations

import re

# Longer than this, a message is not one of the short errors below: it is likely to hold echoed input.
_MAX_KNOWN = 300

# (what the server's own message says, the words vask says instead)
_KNOWN: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"context length|context window|maximum context|too many tokens|input length|too long", re.I),
        "the text is longer than the model's context window",
    ),
    (
        re.compile(r"does not support (?:embed|chat|generat|complet)", re.I),
        "the model does not do this kind of request (an embedding model asked to chat, or the other way)",
    ),
    (
        re.compile(r"out of memory|more system memory|insufficient memory|cudamalloc|\boom\b", re.I),
        "the model server ran out of memory",
    ),
    (re.compile(r"runner process has terminated|runner process no longer running", re.I), "the model's runner stopped"),
    (re.compile(r"no space left on device", re.I), "the model server's disk is full"),
    (re.compile(r"rate limit|too many requests", re.I), "the server is busy (rate limit)"),
)

# What Ollama says when a pull fails
_PULL_KNOWN: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"file does not exist|manifest unknown|not found", re.I),
        "the registry has no model by that name",
    ),
    (
        re.compile(
            r"no such host|dial tcp|i/o timeout|connection refused|connection reset|tls handshake|"
            r"context deadline exceeded|max retries exceeded|network is unreachable",
            re.I,
        ),
        "Ollama could not reach the registry",
    ),
    (re.compile(r"unauthorized|forbidden|authentication", re.I), "the registry refused it (a private model?)"),
    (re.compile(r"no space left on device", re.I), "Ollama's disk is full"),
)


def _recognise(text: str, known: tuple[tuple[re.Pattern[str], str], ...]) -> str:
    if not text or len(text) > _MAX_KNOWN:
        return ""
    for pattern, said in known:
        if pattern.search(text):
            return said
    return ""


def known_reason(text: str) -> str:
    """Fixed words for a model server's error message that vask recognises; "" for any other."""
    return _recognise(text, _KNOWN)


def known_pull_reason(text: str) -> str:
    """Fixed words for why Ollama could not pull a model; "" when the error is not recognised."""
    return _recognise(text, _PULL_KNOWN) or _recognise(text, _KNOWN)


def with_reason(message: str, reason: str) -> str:
    return f"{message}: {reason}" if reason else message


SERVER_LOG_HINT = (
    "The server's own log says why (vask does not repeat its error text, which can hold your notes' words)."
)
