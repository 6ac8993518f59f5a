"""LanceDB, imported without running the package of its REST namespace client.

`lancedb` imports the models of `lance_namespace_urllib3_client`, and that package's `__init__` also
imports its nine REST API classes, whose pydantic `validate_call` wrappers are built at import: much
of every start (docs/BENCHMARKS.md, "Speed"), for a client of remote namespaces that vask never
connects to. The package is put in place without its `__init__`, so its submodules (the
models) import as usual; the first use of anything else it defines runs the real `__init__` then, so
nothing that does need the client finds it missing.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any

_REST_CLIENT = "lance_namespace_urllib3_client"


class _DeferredPackage(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or self.__dict__.get("_vask_loaded"):
            raise AttributeError(name)
        self._vask_loaded = True
        self.__spec__.loader.exec_module(self)  # type: ignore[union-attr]
        return getattr(self, name)


def _defer_rest_client() -> None:
    if _REST_CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(_REST_CLIENT)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not installed, or not a package: lancedb imports what it has
    package = _DeferredPackage(_REST_CLIENT)
    package.__spec__ = spec
    package.__path__ = list(spec.submodule_search_locations)
    package.__file__ = spec.origin
    package.__loader__ = spec.loader
    package.__package__ = _REST_CLIENT
    sys.modules[_REST_CLIENT] = package


_defer_rest_client()

import lancedb  # noqa: E402
from lancedb.index import FTS, BTree, IvfRq  # noqa: E402
from lancedb.query import MatchQuery  # noqa: E402

__all__ = ["FTS", "BTree", "IvfRq", "MatchQuery", "lancedb"]
