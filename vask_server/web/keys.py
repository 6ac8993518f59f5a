"""Typed keys for what the app holds."""

from __future__ import annotations

from aiohttp import web

from vask_server.adapters.token import TokenRegistry
from vask_server.services.context import Services
from vask_server.services.sync.live import LiveIndex

SERVICES = web.AppKey("services", Services)
LIVE = web.AppKey("live", LiveIndex)
TOKENS = web.AppKey("tokens", TokenRegistry)  # the devices' tokens, and which may apply proposed changes
