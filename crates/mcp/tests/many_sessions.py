"""Many concurrent MCP sessions (PyPI `mcp` 2.3.0) over streamable HTTP, each holding one
pending question; checks every answer reaches its own caller. Prints one JSON object:
{"answered": n, "mismatches": [...], "forms_seen": n}.

    python concurrent.py --url URL --count N --mode legacy|auto [--elicit]

With --elicit each client answers its own form, but only once all N forms are pending (so
the server holds N questions at once); without it the server's fallback answerer holds them.
"""

import argparse
import json

import anyio
import mcp_types as types
from mcp import Client


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--mode", default="legacy")
    p.add_argument("--elicit", action="store_true")
    args = p.parse_args()

    all_pending = anyio.Event()
    seen = {"forms": 0}
    answered = []
    mismatches = []

    async def session(i):
        async def elicit(context, params):
            if params.message != f"caller {i}":
                mismatches.append({"caller": i, "form": params.message})
            seen["forms"] += 1
            if seen["forms"] == args.count:
                all_pending.set()
            await all_pending.wait()
            return types.ElicitResult(action="accept", content={"q": f"answer {i}"})

        callback = elicit if args.elicit else None
        async with Client(args.url, mode=args.mode, elicitation_callback=callback) as client:
            arguments = {"questions": [{"id": "q", "question": f"caller {i}"}]}
            result = await client.call_tool("ask_user_question", arguments)
            expected = f"answer {i}" if args.elicit else f"caller {i}"
            got = result.structured_content
            if got != {"answers": [{"id": "q", "selected": [], "custom": expected}]}:
                mismatches.append({"caller": i, "got": got, "text": result.content[0].text})
            else:
                answered.append(i)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            for i in range(args.count):
                tg.start_soon(session, i)
    print(json.dumps({"answered": len(answered), "mismatches": mismatches, "forms_seen": seen["forms"]}))


anyio.run(main)
