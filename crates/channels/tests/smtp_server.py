"""A REAL SMTP server for the email tests (PyPI aiosmtpd), started by crates/channels/tests.

Usage: smtp_server.py CERT.pem KEY.pem OUTDIR
STARTTLS is required (aiosmtpd answers 530 to mail before it). Prints the port it listens on
(127.0.0.1, a free port) on stdout, then writes each received message, parsed with Python's
own `email` package, as OUTDIR/N.json (N = 1, 2, …; written whole, then renamed), with
whether TLS was in effect. Runs until killed.
"""

import asyncio
import email
import email.policy
import json
import os
import ssl
import sys

from aiosmtpd.smtp import SMTP

cert, key, outdir = sys.argv[1:4]


class Handler:
    def __init__(self):
        self.n = 0

    async def handle_DATA(self, server, session, envelope):
        self.n += 1
        msg = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        text = msg.get_body(("plain",))
        html = msg.get_body(("html",))
        rec = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "tls": session.ssl is not None,
            "from": str(msg["from"]),
            "to": str(msg["to"]),
            "subject": str(msg["subject"]),
            "message_id": msg["message-id"],
            "in_reply_to": msg["in-reply-to"],
            "text": text.get_content() if text is not None else None,
            "html": html.get_content() if html is not None else None,
        }
        tmp = os.path.join(outdir, f"{self.n}.json.tmp")
        with open(tmp, "w") as f:
            json.dump(rec, f)
        os.rename(tmp, os.path.join(outdir, f"{self.n}.json"))
        return "250 OK"


async def main():
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    handler = Handler()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, tls_context=ctx, require_starttls=True, hostname="localhost"),
        "127.0.0.1",
        0,
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


asyncio.run(main())
