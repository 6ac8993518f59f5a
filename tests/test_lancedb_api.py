"""LanceDB is imported without its REST namespace client's API classes (~0.5 s of every start), and
the client is still whole for whoever uses it. In a fresh interpreter: imports are once a process."""

import subprocess
import sys

PROBE = """
import sys
import vask_server.adapters.store
print("api imported:", "lance_namespace_urllib3_client.api" in sys.modules)
import lance_namespace_urllib3_client as client
print("client:", client.ApiClient.__name__, client.TableApi.__name__)
print("api imported:", "lance_namespace_urllib3_client.api" in sys.modules)
"""


def test_the_store_imports_lancedb_without_the_rest_client_which_loads_when_used() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["api imported: False", "client: ApiClient TableApi", "api imported: True"]
