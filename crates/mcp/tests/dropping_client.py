"""A real third-party MCP client (PyPI `mcp` 2.3.0) that can drop a request without a word,
as Gemini CLI's Esc does: the SDK abandons it with `cancel_on_abandon` off, so no
`notifications/cancelled` goes out and the server's late result is discarded by the SDK.

Run by the Rust tests in this directory over stdio (legacy handshake, no elicitation):

    python dropping_client.py ARGUMENTS_JSON BIN ARG...

Commands on stdin, one per line; one JSON object per line on stdout for each:
    call NAME    start `tools/call ask_user_question` with ARGUMENTS_JSON as request NAME
                 -> {"called": NAME}
    drop NAME    abandon request NAME silently -> {"dropped": NAME}
    result NAME  wait for request NAME's result -> {"name": NAME, "text": ..., "isError": ...}
"""

import json
import os
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def reply(value):
    print(json.dumps(value), flush=True)


async def main():
    arguments = json.loads(sys.argv[1])
    server = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=dict(os.environ))
    async with Client(server, mode="legacy") as client:
        dispatcher = client.session._dispatcher
        calls = {}
        results = {}

        async def run(name, scope, done):
            with scope:
                results[name] = await dispatcher.send_raw_request(
                    "tools/call",
                    {"name": "ask_user_question", "arguments": arguments},
                    {"cancel_on_abandon": False},
                )
            done.set()

        async with anyio.create_task_group() as group:
            while True:
                line = await anyio.to_thread.run_sync(sys.stdin.readline)
                if not line.strip():
                    break
                verb, name = line.split()
                if verb == "call":
                    scope, done = anyio.CancelScope(), anyio.Event()
                    calls[name] = (scope, done)
                    group.start_soon(run, name, scope, done)
                    reply({"called": name})
                elif verb == "drop":
                    scope, done = calls[name]
                    scope.cancel()
                    await done.wait()
                    reply({"dropped": name})
                elif verb == "result":
                    await calls[name][1].wait()
                    result = results[name]
                    reply({
                        "name": name,
                        "text": result["content"][0]["text"],
                        "isError": result.get("isError", False),
                    })
            group.cancel_scope.cancel()


anyio.run(main)
