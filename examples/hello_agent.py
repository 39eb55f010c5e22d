"""A complete (tiny) agent: greet the player, wait for a reply, answer with another expression.

Against the local stage:

    make run                                  # terminal 1: prints the page URL of the stage `demo`
    .venv/bin/python examples/hello_agent.py  # terminal 2: then answer on the page

It reads the stage from `.butai/local.json` (or the file named by BUTAI_LOCAL_JSON); `--stage NAME` picks
another local stage. Against a deployed stage, set BUTAI_API_URL, BUTAI_STAGE_ID and BUTAI_AGENT_KEY and
pass `--env`.
"""
from __future__ import annotations

import argparse
import os
import sys

from butai.client import ButaiError, Stage


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="greet, wait for one reply, answer it")
    parser.add_argument("--stage", default=os.environ.get("BUTAI_STAGE", "demo"), help="local stage name")
    parser.add_argument("--env", action="store_true", help="use BUTAI_API_URL/BUTAI_STAGE_ID/BUTAI_AGENT_KEY")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for a reply (default 300)")
    parser.add_argument("--interval", type=float, default=2, help="seconds between checks (default 2)")
    return parser.parse_args(argv)


def run(stage: Stage, timeout: float, interval: float) -> int:
    # 1. Say something, with an expression. (The client sends a request_id, so its retries never
    #    show the line twice.)
    stage.speak("こんにちは！ 舞台へようこそ。きょうはどんな一日だった？",
                expression="smile")
    print("said hello; answer on the stage page …", flush=True)

    # 2. Wait for the player. Each reply is handed to this agent alone until it is acknowledged (step 3).
    replies = stage.wait_for_replies(timeout=timeout, interval=interval)
    if not replies:
        stage.speak("お返事、また今度聞かせてね。", expression="troubled")
        print("no reply before the timeout", flush=True)
        return 1

    # 3. Answer, with a different expression.
    said = replies[-1].text
    print(f"the player said: {said}", flush=True)
    stage.speak(f"「{said[:200]}」……そうなんだ！ 教えてくれてありがとう。",
                expression="surprised", request_id=f"answer-{replies[-1].id}")
    # Answered: acknowledge, so the stage never hands these replies out again.  (Had the agent died before,
    # they would come back to the next fetch after their lease; the request_id keeps the answer single.)
    stage.ack(replies)
    print("answered.", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        stage = Stage.from_env() if args.env else Stage.from_local(args.stage)
        return run(stage, args.timeout, args.interval)
    except ButaiError as exc:
        print(f"hello_agent: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
