"""`butai stage webhook set|show|delete|test`: a stage's webhook, through the API with the agent key.

STAGE, ``--api-url`` and ``--key`` work as for `butai speak` (see ``butai.config``).
"""
from __future__ import annotations

import json


def register(ssub) -> None:
    from butai.commands import _guarded
    hook = ssub.add_parser("webhook", help="a stage's webhook: set, show, delete, test",
                           description="Every new reply on the stage is POSTed, signed, to the webhook URL.")
    hsub = hook.add_subparsers(dest="webhook_command", metavar="ACTION")
    stage_help = "a local stage name (e.g. demo) or a stage id (default: $BUTAI_STAGE_ID, else demo)"

    def common(parser, stage_first=True):
        if stage_first:
            parser.add_argument("stage", nargs="?", metavar="STAGE", help=stage_help)
        parser.add_argument("--api-url", default=None, help="the stage API's base URL")
        parser.add_argument("--key", default=None, help="the stage's agent key")
        parser.add_argument("--json", action="store_true", help="print the API's answer as JSON")

    put = hsub.add_parser("set", help="register (or replace) the webhook; prints its secret once")
    put.add_argument("stage", nargs="?", metavar="STAGE", help=stage_help)
    put.add_argument("url", help="https URL (http://127.0.0.1:PORT/… in a local run)")
    common(put, stage_first=False)
    put.set_defaults(func=_guarded(_set))
    show = hsub.add_parser("show", help="the webhook's URL and its last deliveries")
    common(show)
    show.set_defaults(func=_guarded(_show))
    delete = hsub.add_parser("delete", help="remove the webhook")
    common(delete)
    delete.set_defaults(func=_guarded(_delete))
    test = hsub.add_parser("test", help="send one signed webhook.test event now")
    common(test)
    test.set_defaults(func=_guarded(_test))
    hook.set_defaults(func=lambda a: hook.print_help() or 2)


def _stage(args):
    from butai import config
    from butai.client import Stage
    target = config.resolve(args.stage, api_url=args.api_url, key=args.key)
    return Stage(target.api_url, target.stage_id, target.agent_key)


def _set(args) -> int:
    created = _stage(args).set_webhook(args.url)
    if args.json:
        print(created.model_dump_json())
    else:
        print(f"webhook set: {created.url}\n"
              f"  secret:    {created.secret}\n"
              f"  signature: {created.signature_header}\n"
              "the secret is shown only now; verify deliveries with butai.client.verify_webhook.")
    return 0


def _show(args) -> int:
    view = _stage(args).get_webhook()
    if args.json:
        print(view.model_dump_json())
        return 0
    print(f"webhook: {view.url}  (since {view.created_at})")
    if not view.deliveries:
        print("no deliveries yet")
    for d in view.deliveries:
        answer = f"HTTP {d.last_status}" if d.last_status is not None else "-"
        print(f"  {d.reply_id}  {d.status:<9} attempts {d.attempts:<3} {answer:<8} {d.last_error or ''}")
    return 0


def _delete(args) -> int:
    deleted = _stage(args).delete_webhook()
    print(json.dumps({"deleted": deleted}) if args.json else ("webhook deleted" if deleted else "there was no webhook"))
    return 0


def _test(args) -> int:
    result = _stage(args).test_webhook()
    if args.json:
        print(result.model_dump_json())
    elif result.ok:
        print(f"delivered: HTTP {result.status} in {result.ms:.0f} ms")
    else:
        print(f"not delivered: {result.error} ({result.ms:.0f} ms)")
    return 0 if result.ok else 1
