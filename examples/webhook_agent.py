"""An event-driven agent: it runs only when the stage's webhook wakes it, and answers with speak.

Nothing polls.  The stage POSTs each new reply, signed, to this agent; the agent checks the
signature, claims the new replies with `fetch_replies` (each reply is handed to one caller under a
lease, so a repeated delivery answers nothing twice), speaks, and acknowledges each reply once its
line is spoken.  An agent that dies in between loses nothing: the lease ends, and the next wake-up
(or the agent's start, which looks once) gets the reply again.  Two ways to run the same `answer`:

1. A tiny HTTP server (standard library only).  Against the local stage:

       make run                                     # terminal 1
       .venv/bin/python examples/webhook_agent.py   # terminal 2: registers its own webhook on `demo`

   then answer on the stage page.  `--stage NAME` picks another local stage.

2. An AWS Lambda handler (`lambda_handler`) behind a function URL or API Gateway: register the URL
   with `butai stage webhook set STAGE https://…`, and give the function BUTAI_API_URL,
   BUTAI_STAGE_ID, BUTAI_AGENT_KEY and BUTAI_WEBHOOK_SECRET (the secret `webhook set` printed).

The stage waits at most 5 s for an answer and retries failed deliveries, so the HTTP server
answers 202 at once and does the work afterwards.  A real agent would call its model in `answer`.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from butai.client import ButaiError, Stage, WebhookSignatureError, verify_webhook

_turn = threading.Lock()       # one turn at a time: two wake-ups never interleave their lines


def answer(stage: Stage, payload: dict) -> int:
    """One turn, woken by a delivery: claim what is new and answer it.  Returns the lines spoken."""
    if payload.get("type") != "reply.created":
        return 0                                # e.g. `webhook.test`
    return catch_up(stage)


def catch_up(stage: Stage) -> int:
    """Claims every reply nobody holds, answers each and acknowledges it once answered."""
    with _turn:
        spoken = 0
        for reply in stage.fetch_replies():     # the claim: an earlier wake-up may already have answered
            # The request id makes the line safe to say again: a redelivered reply (its first claimer died
            # after speaking, before acknowledging) is not spoken twice.
            stage.speak(f"「{reply.text}」、ちゃんと届いたよ！", expression="smile", request_id=f"answer-{reply.id}")
            stage.ack([reply])
            spoken += 1
        return spoken


# ---------------------------------------------------------------- 1. a tiny HTTP server

def make_handler(stage: Stage, secret: str):
    class WebhookHandler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002
            pass

        def do_POST(self):
            body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 64 * 1024))
            try:
                payload = verify_webhook(secret, self.headers, body)
            except WebhookSignatureError as exc:
                self._answer(401, {"error": exc.reason})
                return
            self._answer(202, {"accepted": True})
            threading.Thread(target=_answer_logged, args=(stage, payload), daemon=True).start()

        def _answer(self, status: int, data: dict) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return WebhookHandler


def _answer_logged(stage: Stage, payload: dict) -> None:
    try:
        spoken = answer(stage, payload)
        if spoken:
            print(f"answered {spoken} repl{'y' if spoken == 1 else 'ies'}", flush=True)
    except ButaiError as exc:
        # The reply stays unread on the stage; the next wake-up (or a retry) answers it.
        print(f"webhook_agent: {exc}", file=sys.stderr, flush=True)


def serve(stage: Stage, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Starts the receiver and registers it as the stage's webhook; returns the server and the secret."""
    server = ThreadingHTTPServer((host, port), make_handler(stage, ""))
    url = f"http://{host}:{server.server_address[1]}/butai"
    secret = stage.set_webhook(url).secret
    server.RequestHandlerClass = make_handler(stage, secret)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, secret


# ---------------------------------------------------------------- 2. the same as a Lambda handler

def lambda_handler(event, context):  # noqa: ARG001 - Lambda's signature
    """A function URL / API Gateway (payload 1.0 or 2.0) event in, an HTTP answer out."""
    body = event.get("body") or ""
    raw = base64.b64decode(body) if event.get("isBase64Encoded") else body.encode("utf-8")
    try:
        payload = verify_webhook(os.environ["BUTAI_WEBHOOK_SECRET"], event.get("headers") or {}, raw)
    except WebhookSignatureError as exc:
        return {"statusCode": 401, "body": json.dumps({"error": exc.reason})}
    spoken = answer(Stage.from_env(), payload)
    return {"statusCode": 200, "body": json.dumps({"spoken": spoken})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="an agent woken by the stage's webhook")
    parser.add_argument("--stage", default=os.environ.get("BUTAI_STAGE", "demo"), help="local stage name")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    args = parser.parse_args(argv)
    try:
        stage = Stage.from_local(args.stage)
        server, _ = serve(stage, port=args.port)
        catch_up(stage)       # replies that came while no agent listened (or whose lease ended)
    except ButaiError as exc:
        print(f"webhook_agent: {exc}", file=sys.stderr)
        return 2
    print(f"listening on 127.0.0.1:{server.server_address[1]}, registered as the webhook of {args.stage}; "
          "answer on the stage page (Ctrl-C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        stage.delete_webhook()
    return 0


if __name__ == "__main__":
    sys.exit(main())
