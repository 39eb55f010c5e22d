"""`butai speak`, `butai replies`, `butai watch` and `butai mcp`: the agent's side from a shell.

STAGE is a local stage name from ``.butai/local.json`` (``demo`` after
`make run`) or a stage id; the API URL and agent key come from ``--api-url``/
``--key``, else ``BUTAI_API_URL``/``BUTAI_AGENT_KEY``, else the local run (the
rules are in ``butai.config``).  Errors are one line on stderr and a non-zero
exit: 1 when the stage said no or could not be reached, 2 when the command
could not tell which stage to talk to.
"""
from __future__ import annotations

import argparse
import functools
import json
import signal
import sys
import time

from .protocol import BASIC_EXPRESSIONS as BASIC
from .protocol import FALLBACK_EXPRESSION as FALLBACK

CONFIG_EXIT = 2
ERROR_EXIT = 1


def register(sub) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--api-url", default=None, help="the stage API's base URL (default: $BUTAI_API_URL, "
                                                        "else the local run)")
    common.add_argument("--key", default=None, help="the stage's agent key (default: $BUTAI_AGENT_KEY, "
                                                    "else the local run's)")
    stage_help = "a local stage name (e.g. demo) or a stage id (default: $BUTAI_STAGE_ID, else demo)"

    speak = sub.add_parser("speak", parents=[common], help="make the character say one line",
                           description="Make the character say one line. TEXT '-' reads the line from stdin.")
    speak.add_argument("stage", nargs="?", metavar="STAGE", help=stage_help)
    speak.add_argument("text", metavar="TEXT", help="the line; '-' reads it from stdin")
    speak.add_argument("--expression", "-e", default=None,
                       help=f"expression key ({', '.join(BASIC)}; unknown keys are shown as {FALLBACK}); "
                            "leave it out and the stage judges the face from the line")
    speak.add_argument("--audio", default=None,
                       help="the line's voice: a path from `butai audio upload` or an https URL on a listed origin")
    speak.add_argument("--speaker", default=None, help="display name (default: the character's name)")
    speak.add_argument("--request-id", default=None,
                       help="idempotency key: the same id again is not spoken twice (default: a new one)")
    speak.add_argument("--json", action="store_true", help="print the API's result as JSON")
    speak.set_defaults(func=_guarded(_speak))

    replies = sub.add_parser("replies", parents=[common], help="print the player's new replies (each only once)")
    replies.add_argument("stage", nargs="?", metavar="STAGE", help=stage_help)
    replies.add_argument("--json", action="store_true", help="print a JSON array")
    replies.set_defaults(func=_guarded(_replies))

    watch = sub.add_parser("watch", parents=[common], help="print replies as they come, until Ctrl-C")
    watch.add_argument("stage", nargs="?", metavar="STAGE", help=stage_help)
    watch.add_argument("--interval", type=float, default=2.0,
                       help="seconds between polls with --poll (default 2)")
    watch.add_argument("--poll", action="store_true",
                       help="poll every --interval seconds instead of long-polling (20 s per request)")
    watch.add_argument("--json", action="store_true", help="print one JSON object per line")
    watch.set_defaults(func=_guarded(_watch))

    mcp = sub.add_parser("mcp", help="serve speak/fetch_replies/wait_for_replies/get_stage as an MCP server over stdio",
                         description="A Model Context Protocol server over stdio. Configure it with "
                                     "BUTAI_API_URL, BUTAI_STAGE_ID and BUTAI_AGENT_KEY, or with BUTAI_LOCAL_JSON "
                                     "and BUTAI_STAGE (default demo) for the local run.")
    mcp.set_defaults(func=_mcp)


def _guarded(command):
    """Turns the client's errors into one line on stderr and an exit code."""
    @functools.wraps(command)
    def run(args) -> int:
        from butai.errors import ButaiError, ConfigError
        try:
            return command(args)
        except ConfigError as exc:
            return _fail(str(exc), CONFIG_EXIT)
        except ButaiError as exc:
            return _fail(str(exc), ERROR_EXIT)
    return run


def _fail(message: str, code: int) -> int:
    print(f"butai: {message}", file=sys.stderr, flush=True)
    return code


def _stage(args):
    from butai import config
    from butai.client import Stage
    target = config.resolve(args.stage, api_url=args.api_url, key=args.key)
    return Stage(target.api_url, target.stage_id, target.agent_key)


def _speak(args) -> int:
    from butai.errors import ConfigError
    text = sys.stdin.read().rstrip("\n") if args.text == "-" else args.text
    if not text.strip():
        raise ConfigError("nothing to say: TEXT is empty")
    result = _stage(args).speak(text, expression=args.expression, speaker=args.speaker,
                                request_id=args.request_id, audio=args.audio)
    if args.json:
        print(result.model_dump_json())
    else:
        judged = ", judged by the stage" if result.expression_source == "auto" else ""
        print(f"spoke {result.id} ({result.expression}{judged})")
    if result.expression_source == "agent" and result.expression != result.asked_expression:
        print(f"butai: note: expression {result.asked_expression!r} is not available; shown as "
              f"{result.expression!r}", file=sys.stderr)
    return 0


def _replies(args) -> int:
    stage = _stage(args)
    replies = stage.fetch_replies()
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in replies], ensure_ascii=False), flush=True)
    else:
        for reply in replies:
            print(_line(reply), flush=True)
    # Printed: handed over.  Acknowledged only now, so replies whose printing failed come back.
    if replies:
        stage.ack(replies)
    return 0


def _watch(args) -> int:
    from butai.client import new_request_id
    from butai.errors import ConnectionFailed, InvalidRequest, RateLimited, ServerError

    from .protocol import MAX_WAIT_S
    if args.interval <= 0:
        return _fail("--interval must be positive", CONFIG_EXIT)
    stage = _stage(args)
    # Ctrl-C must stop the watch even when SIGINT was ignored by whoever started it (a background job
    # of a non-interactive shell starts with SIGINT ignored, and Python then never raises
    # KeyboardInterrupt): that was why a watch could outlive its Ctrl-C.  SIGTERM stops it the same way,
    # so what it printed is acknowledged before it goes.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    request_id, printed = None, set()
    try:
        print(f"butai: watching {stage.stage_id} for replies (Ctrl-C to stop)", file=sys.stderr, flush=True)
        while True:
            # Each fetch carries its own request id until its replies are all printed: a fetch cut short
            # by Ctrl-C (even a slow one: Ctrl-C does not wait for it) may have claimed replies whose
            # answer never arrived, and the same id gets exactly those back.  The replies printed so far
            # are acknowledged by this very fetch; a watch killed before that leaves them to their lease,
            # and the next watch prints them again (marked as a redelivery).
            request_id, failed = new_request_id(), False
            try:
                # Long-poll: the answer comes as soon as a reply is written, or [] after 20 s.
                replies = (stage.fetch_replies(request_id) if args.poll
                           else stage.fetch_replies(request_id, wait=MAX_WAIT_S))
            except InvalidRequest as exc:
                if args.poll or exc.field != "wait":
                    raise
                args.poll, replies = True, []        # a stage that does not know `wait`: poll it
            except (ConnectionFailed, ServerError, RateLimited) as exc:
                # Keep watching through a restart or a bad minute; the client already retried.
                print(f"butai: {exc}; still watching", file=sys.stderr, flush=True)
                replies, failed = [], True
            for reply in replies:
                _show(reply, args.json)
                printed.add(reply.id)
            request_id = None
            if args.poll or failed:
                time.sleep(args.interval)
    except KeyboardInterrupt:
        recovered = _recover(stage, request_id, printed, args.json) if request_id is not None else []
        _acknowledge(stage, [rid for rid in stage.handed_over if rid in printed] + recovered)
        return 0


def _recover(stage, request_id: str, printed: set[str], as_json: bool) -> list[str]:
    """After Ctrl-C during a fetch: print what that fetch claimed (and had not printed), or say how to.
    Returns the ids it printed."""
    from butai.client import RetryPolicy, Stage
    from butai.errors import ButaiError
    quick = Stage(stage.api_url, stage.stage_id, stage.agent_key, timeout=5.0,
                  retry=RetryPolicy(attempts=2, backoff=0.2))
    try:
        replies = quick.fetch_replies(request_id)
    except (ButaiError, KeyboardInterrupt) as exc:
        reason = "interrupted again" if isinstance(exc, KeyboardInterrupt) else str(exc)
        print(f"butai: replies claimed by the interrupted fetch were not read back ({reason}); they are "
              "handed out again when their lease ends", file=sys.stderr, flush=True)
        return []
    shown = []
    for reply in replies:
        if reply.id not in printed:
            _show(reply, as_json)
            printed.add(reply.id)
        shown.append(reply.id)
    return shown


def _acknowledge(stage, unacked: list[str]) -> None:
    """Acknowledges what was printed and not yet acknowledged (never what was not printed)."""
    from butai.client import RetryPolicy, Stage
    from butai.errors import ButaiError
    unacked = list(dict.fromkeys(unacked))
    if not unacked:
        return
    quick = Stage(stage.api_url, stage.stage_id, stage.agent_key, timeout=5.0,
                  retry=RetryPolicy(attempts=2, backoff=0.2))
    try:
        quick.ack(unacked)
    except (ButaiError, KeyboardInterrupt):
        print("butai: could not acknowledge the replies printed last; they are handed out again when their "
              "lease ends", file=sys.stderr, flush=True)


def _show(reply, as_json: bool) -> None:
    print(reply.model_dump_json() if as_json else _line(reply), flush=True)


def _line(reply) -> str:
    # One reply per line: a reply's own line breaks are shown as "⏎ ".  A redelivery (handed out before,
    # never acknowledged: its first reader may have gone away) says so.
    again = f"  (delivery {reply.deliveries})" if getattr(reply, "deliveries", 1) > 1 else ""
    return f"{reply.created_at}  " + reply.text.replace("\r\n", "\n").replace("\n", " ⏎ ") + again


def _mcp(args) -> int:
    try:
        from butai import mcp_server
    except ModuleNotFoundError as exc:
        # The MCP SDK or one of its packages is missing (make run installs them: requirements-run.txt).
        return _fail(f"`butai mcp` needs the MCP SDK (missing module {exc.name}): run `make run` once, or "
                     "pip install -r requirements-run.txt", CONFIG_EXIT)
    return mcp_server.main()
