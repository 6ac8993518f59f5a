"""The MCP door: vask's retrieval for agents (Claude Desktop and Code, Cursor, VS Code, LM Studio...), over
stdio (`vask mcp`) and over Streamable HTTP at `/mcp` on `vask serve`.

Beside web/, above services/: each tool is a thin adapter from its arguments to the service call the HTTP
API makes for the same thing (calls.py), and from the result to text a model reads and structured content
(shapes.py). Exclusions and path checks are the services' and the vault adapter's, as for every door.
Importing this package imports nothing of the MCP SDK: `vask serve` loads it on the first call to /mcp.
"""
