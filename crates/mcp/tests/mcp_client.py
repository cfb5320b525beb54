"""A real third-party MCP client (PyPI `mcp` 2.3.0) driving the ask-user MCP server.

Run by the Rust tests in this directory; prints one JSON object on stdout:
{"protocol", "tools", "result", "elicitations", "withdrawn"}.

    python mcp_client.py (--command BIN ARG... | --url URL) --mode legacy|auto
        [--arguments JSON] [--reply accept:JSON|decline|cancel|none|hold] [--cancel]

--reply says what the elicitation callback does (none: the client declares no elicitation;
hold: it never answers). --cancel cancels the tool call once the question is pending (the
elicitation arrived, or, without elicitation, --pending-file exists) and reports whether the
server withdrew the form (the callback was interrupted by notifications/cancelled).
"""

import argparse
import json
import os
import sys

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--command", nargs=argparse.REMAINDER)
    p.add_argument("--url")
    p.add_argument("--mode", default="legacy")
    p.add_argument("--arguments", default=None)
    p.add_argument("--reply", default="none")
    p.add_argument("--cancel", action="store_true")
    p.add_argument("--list-only", action="store_true")
    p.add_argument("--pending-file", default=None)
    p.add_argument("--vanish", action="store_true")
    p.add_argument("--tool", default="ask_user_question")
    p.add_argument("--web-url", default=None)
    p.add_argument("--web", default=None)
    return p.parse_args(sys.argv[1:])


async def main():
    args = parse()
    out = {"elicitations": [], "withdrawn": False}
    asked = anyio.Event()
    withdrawn = anyio.Event()
    replies = args.reply.split("|")

    async def elicit(context, params):
        out["elicitations"].append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        asked.set()
        reply = replies[min(len(out["elicitations"]), len(replies)) - 1]
        if reply == "hold":
            try:
                await anyio.sleep_forever()
            finally:
                withdrawn.set()
        if reply.startswith("accept:"):
            return types.ElicitResult(action="accept", content=json.loads(reply[len("accept:"):]))
        return types.ElicitResult(action=reply)

    callback = None if args.reply == "none" else elicit
    if args.url:
        server = args.url
    else:
        server = StdioServerParameters(command=args.command[0], args=args.command[1:], env=dict(os.environ))
    async with Client(server, mode=args.mode, elicitation_callback=callback) as client:
        out["protocol"] = client.protocol_version
        tools = await client.list_tools()
        out["tools"] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]
        if args.list_only:
            print(json.dumps(out))
            return
        arguments = json.loads(args.arguments) if args.arguments else {}

        async def call():
            try:
                result = await client.call_tool(args.tool, arguments)
            except Exception as error:  # a protocol error, reported for the test to check
                out["error"] = getattr(error, "message", str(error))
                return
            out["result"] = result.model_dump(mode="json", by_alias=True, exclude_none=True)

        if args.vanish:
            # The client process dies while its question is pending: no cancellation is sent,
            # the connection just closes.
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                while not os.path.exists(args.pending_file):
                    await anyio.sleep(0.02)
                print(json.dumps({"vanished": True}), flush=True)
                os._exit(0)
        if args.web_url:
            await through_web(args, call, out)
        elif not args.cancel:
            await call()
            if callback is not None and "hold" in replies and args.mode == "legacy":
                # The server gave up (its time budget): it must have withdrawn the form.
                with anyio.fail_after(10):
                    await withdrawn.wait()
                out["withdrawn"] = True
        else:
            async with anyio.create_task_group() as tg:
                scope = anyio.CancelScope()

                async def cancellable():
                    with scope:
                        await call()

                tg.start_soon(cancellable)
                if args.pending_file:
                    while not os.path.exists(args.pending_file):
                        await anyio.sleep(0.02)
                else:
                    await asked.wait()
                scope.cancel()
            if callback is not None and args.mode == "legacy":
                with anyio.fail_after(10):
                    await withdrawn.wait()
                out["withdrawn"] = True
            # The session still works after a cancelled call.
            tools = await client.list_tools()
            out["after_cancel_tools"] = len(tools.tools)
    print(json.dumps(out))


async def page_events(http, url):
    """The web page's live stream, as (event, data) pairs."""
    async with http.stream("GET", url + "events") as response:
        event = None
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line[len("event:"):].strip()
            elif line.startswith("data:"):
                yield event, json.loads(line[len("data:"):].strip())


async def through_web(args, call, out):
    """Act as the web page (its own HTTP API, as its script does): wait for the batch, then
    answer it (--web JSON answers) or cancel the tool call and watch the batch withdrawn."""
    origin = args.web_url.split("/")[0] + "//" + args.web_url.split("/")[2]
    async with httpx2.AsyncClient(timeout=None) as http, anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def cancellable():
            with scope:
                await call()

        tg.start_soon(cancellable)
        batch = None
        async for event, data in page_events(http, args.web_url):
            if event == "snapshot" and data["batches"]:
                batch = data["batches"][0]
            elif event == "opened":
                batch = data
            elif event == "withdrawn" and batch is not None and data["batch"] == batch["batch"]:
                out["web_withdrawn"] = data["reason"]
                break
            if batch is not None and "web_batch" not in out:
                out["web_batch"] = batch
                if args.web == "cancel":
                    scope.cancel()
                else:
                    body = {"batch": batch["batch"], "answers": json.loads(args.web)}
                    response = await http.post(args.web_url + "answer", json=body, headers={"Origin": origin})
                    out["web_status"] = response.status_code


anyio.run(main)
