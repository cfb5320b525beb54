"""Two MCP sessions of one client (PyPI `mcp` 2.3.0, the same client name) over streamable
HTTP asking the identical question at once, then a third session asking it again after both
read their answers. Prints one JSON object:
{"together": [text, text] (sorted), "later": text}.

    python two_sessions.py URL ARGUMENTS_JSON
"""

import json
import sys

import anyio
from mcp import Client


async def main():
    url = sys.argv[1]
    arguments = json.loads(sys.argv[2])

    async def call(results, i):
        async with Client(url, mode="legacy") as client:
            result = await client.call_tool("ask_user_question", arguments)
            results[i] = result.content[0].text

    together = {}
    async with anyio.create_task_group() as group:
        group.start_soon(call, together, 0)
        group.start_soon(call, together, 1)
    later = {}
    await call(later, 0)
    print(json.dumps({"together": sorted(together.values()), "later": later[0]}))


anyio.run(main)
