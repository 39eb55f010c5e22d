"""`butai stage …` and `butai images …`."""
from __future__ import annotations

import base64
import html
import json
import sys
from pathlib import Path

from butai_tools.local.commands import local_json_path, target_settings
from butai_tools.stage import images
from chalicelib import aws
from chalicelib.errors import ApiError
from chalicelib.stage import audio
from chalicelib.stage import face_images as ex

STATIC_CHARACTERS = Path(__file__).resolve().parents[2] / "static" / "characters"


def register(sub) -> None:
    stage = sub.add_parser("stage", help="create and list stages")
    ssub = stage.add_subparsers(dest="stage_command", metavar="ACTION")
    create = ssub.add_parser("create", help="create a stage and print its keys and page URL")
    create.add_argument("name")
    create.add_argument("--character", default=None, help="character id (default: the embedded default)")
    create.add_argument("--scenario", type=Path, default=None,
                        help="make a scenario stage that plays this scenario file (the director answers)")
    create.add_argument("--aws", action="store_true", help="use AWS (BUTAI_* variables) instead of the local run")
    create.add_argument("--json", action="store_true")
    create.set_defaults(func=_create)
    reset = ssub.add_parser("reset", help="restart a scenario stage's game from the start")
    reset.add_argument("name", help="stage name or id")
    reset.add_argument("--aws", action="store_true")
    reset.set_defaults(func=_reset)
    rotate = ssub.add_parser("rotate-keys", help="give a stage new keys; the old ones stop working at once")
    rotate.add_argument("name", help="stage name or id")
    rotate.add_argument("--only", choices=("agent", "player"), default=None)
    rotate.add_argument("--aws", action="store_true")
    rotate.add_argument("--json", action="store_true")
    rotate.set_defaults(func=_rotate)
    lst = ssub.add_parser("list", help="list stages")
    lst.add_argument("--aws", action="store_true")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=_list)
    stage.set_defaults(func=lambda a: stage.print_help() or 2)
    from butai import webhook_commands
    webhook_commands.register(ssub)

    export = sub.add_parser("export-eval", help="write an evaluation set from the turns played on a scenario stage")
    export.add_argument("stage", help="stage name or id")
    export.add_argument("-o", "--output", type=Path, required=True)
    export.add_argument("--aws", action="store_true")
    export.set_defaults(func=_export_eval)

    img = sub.add_parser("images", help="upload expression images, draw a contact sheet")
    isub = img.add_subparsers(dest="images_command", metavar="ACTION")
    up = isub.add_parser("upload", help="upload DIR/<expression>.<svg|png|webp> for a character")
    up.add_argument("dir", type=Path)
    up.add_argument("--character", required=True)
    up.add_argument("--name", default=None, help="display name (default: manifest.json in DIR, else the id)")
    up.add_argument("--aws", action="store_true")
    up.set_defaults(func=_upload)
    sheet = isub.add_parser("sheet", help="write an HTML contact sheet of every expression side by side")
    sheet.add_argument("--character", required=True)
    sheet.add_argument("--dir", type=Path, default=None,
                       help="image folder (default: static/characters/ID, else the bucket)")
    sheet.add_argument("-o", "--output", type=Path, required=True)
    sheet.add_argument("--aws", action="store_true")
    sheet.set_defaults(func=_sheet)
    img.set_defaults(func=lambda a: img.print_help() or 2)

    snd = sub.add_parser("audio", help="upload voice files that lines can carry (speak's audio)")
    asub = snd.add_subparsers(dest="audio_command", metavar="ACTION")
    aup = asub.add_parser("upload", help="upload audio files to the stage's own origin and print their paths")
    aup.add_argument("files", type=Path, nargs="+", metavar="FILE",
                     help=f"audio files ({', '.join(sorted(audio.CONTENT_TYPES))}), at most 10 MiB each")
    aup.add_argument("--aws", action="store_true")
    aup.add_argument("--json", action="store_true", help="print {file: path} as JSON")
    aup.set_defaults(func=_audio_upload)
    snd.set_defaults(func=lambda a: snd.print_help() or 2)


def _services(use_aws: bool):
    from chalicelib import context
    settings, local = target_settings(use_aws)
    return context.build(settings), settings, local


def _service(use_aws: bool):
    services, settings, local = _services(use_aws)
    return services.stage, settings, local


def find_stage(service, name_or_id: str):
    """A stage by id, else by name (the newest of that name)."""
    by_id = service.store.get_stage(name_or_id)
    if by_id is not None:
        return by_id
    named = [s for s in service.list_stages() if s.name == name_or_id]
    if not named:
        sys.exit(f"butai: no stage named {name_or_id!r}")
    return named[-1]


def _create(args) -> int:
    services, settings, local = _services(args.aws)
    # Names are how people (and `butai stage reset/rotate-keys`, the agent tools) pick a stage: one per name.
    taken = next((s for s in services.stage.list_stages() if s.name == args.name), None)
    if taken is not None:
        print(f"butai: a stage named {args.name!r} already exists ({taken.stage_id}); pick another name",
              file=sys.stderr)
        return 1
    try:
        if args.scenario is not None:
            from butai_tools.stage.placeholders import publish_scenario
            from chalicelib.scenario import ScenarioError
            try:
                key, portraits = publish_scenario(services, settings, args.scenario, STATIC_CHARACTERS)
            except (OSError, ScenarioError, images.ImageSetError) as exc:
                print(f"butai: {exc}", file=sys.stderr)
                return 1
            if portraits.generated and not args.json:
                print(f"placeholder portraits for {', '.join(portraits.generated)} (no art found in "
                      f"{args.scenario.parent / 'characters'}/ID or static/characters/ID; "
                      f"`butai images upload DIR --character ID` replaces them)", file=sys.stderr)
            created = services.director.create(args.name, key)
        else:
            created = services.stage.create_stage(args.name, args.character)
    except ApiError as exc:
        print(f"butai: {exc.message}", file=sys.stderr)
        return 1
    fragment = f"#stage={created.stage_id}&key={created.player_key}"
    base = local["api_url"] if local else settings.page_url
    entry = {"stage_id": created.stage_id, "agent_key": created.agent_key, "player_key": created.player_key,
             "stage_url": f"{base.rstrip('/')}/{fragment}"}
    if local is not None:
        from butai_tools.local.runtime import write_json_atomic
        local.setdefault("stages", {})[args.name] = entry
        write_json_atomic(local_json_path(), local)
    if args.json:
        print(json.dumps({"name": args.name, "character": created.character, **entry}, ensure_ascii=False))
    else:
        print(f"stage {args.name} ({created.stage_id}), character {created.character}\n"
              f"  page (player):  {entry['stage_url']}\n"
              f"  agent key:      {created.agent_key}\n"
              f"  player key:     {created.player_key}\n"
              + (f"the stage keeps only the keys' hashes; this machine also keeps both keys in "
                 f"{local_json_path()} (readable by you only)." if local is not None else
                 "keys are shown only now: the stage keeps only their hashes."))
    return 0


def _rotate(args) -> int:
    services, settings, local = _services(args.aws)
    stage = find_stage(services.stage, args.name)
    new = services.stage.rotate_keys(stage.stage_id, args.only or "both")
    if local is not None:
        from butai_tools.local.runtime import write_json_atomic
        for _name, entry in (local.get("stages") or {}).items():
            if entry.get("stage_id") == stage.stage_id:
                entry.update(new)
                base = local["api_url"]
                entry["stage_url"] = f"{base}/#stage={stage.stage_id}&key={entry['player_key']}"
        write_json_atomic(local_json_path(), local)
    if args.json:
        print(json.dumps({"stage_id": stage.stage_id, **new}))
    else:
        print(f"stage {stage.name} ({stage.stage_id}): new keys; the old ones no longer work")
        for role, key in new.items():
            print(f"  {role.replace('_', ' ')}: {key}")
        if "player_key" in new:
            print("  the player's page needs the new URL (with the new key in its fragment)")
    return 0


def _reset(args) -> int:
    services, _, _ = _services(args.aws)
    stage = find_stage(services.stage, args.name)
    try:
        services.director.reset(stage.stage_id)
    except ApiError as exc:
        print(f"butai: {exc.message}", file=sys.stderr)
        return 1
    print(f"stage {stage.name} ({stage.stage_id}): a new game has started")
    return 0


def _export_eval(args) -> int:
    from butai_tools.interpret.export import export_eval
    services, _, _ = _services(args.aws)
    stage = find_stage(services.stage, args.stage)
    try:
        data = export_eval(services.stage, stage.stage_id)
    except ApiError as exc:
        print(f"butai: {exc.message}", file=sys.stderr)
        return 1
    args.output.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(data['cases'])} cases from {stage.name}; review `expect` before using it")
    return 0


def _list(args) -> int:
    service, _, _ = _service(args.aws)
    rows = [{"name": s.name, "stage_id": s.stage_id, "character": s.character, "kind": s.kind,
             "created_at": s.created_at, "updated_at": s.line.updated_at} for s in service.list_stages()]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not rows:
        print("no stages")
    for r in rows:
        print(f"{r['name']:<16} {r['stage_id']:<20} {r['character']:<12} {r['kind']:<8} {r['created_at']}")
    return 0


def _upload(args) -> int:
    try:
        image_set = images.read_image_dir(args.dir, args.character, args.name)
    except images.ImageSetError as exc:
        print(f"butai: {exc}", file=sys.stderr)
        return 1
    settings, _ = target_settings(args.aws)
    try:
        keys = images.upload_image_set(aws.client("s3", settings), settings.bucket, image_set)
    except images.ImageSetError as exc:      # a file changed (made a link) since it was checked
        print(f"butai: {exc}", file=sys.stderr)
        return 1
    print(f"uploaded {len(keys)} images for {args.character} ({image_set.name}): "
          + ", ".join(sorted(image_set.files)))
    return 0


def _audio_upload(args) -> int:
    settings, _ = target_settings(args.aws)
    s3 = aws.client("s3", settings)
    uploaded = {}
    for path in args.files:
        try:
            key = audio.upload_audio(s3, settings.bucket, path)
        except (OSError, ValueError) as exc:
            print(f"butai: {exc}", file=sys.stderr)
            return 1
        # A path on the stage's origin: what speak's `audio` takes, wherever the stage is served.
        uploaded[str(path)] = "/" + key
    if args.json:
        print(json.dumps(uploaded, ensure_ascii=False))
    else:
        for name, url in uploaded.items():
            print(f"{url}  ({name})")
    return 0


def _sheet(args) -> int:
    directory = args.dir or Path("static/characters") / args.character
    if directory.is_dir():
        try:
            image_set = images.read_image_dir(directory, args.character)
        except images.ImageSetError as exc:
            print(f"butai: {exc}", file=sys.stderr)
            return 1
        name = image_set.name
        pictures = {k: (p.read_bytes(), ex.CONTENT_TYPES[p.suffix.lstrip('.').lower()])
                    for k, p in image_set.files.items()}
    else:
        settings, _ = target_settings(args.aws)
        s3 = aws.client("s3", settings)
        manifest = json.loads(s3.get_object(Bucket=settings.bucket,
                                            Key=ex.manifest_key(args.character))["Body"].read())
        name = manifest.get("name", args.character)
        pictures = {}
        for key, filename in manifest["expressions"].items():
            obj = s3.get_object(Bucket=settings.bucket, Key=ex.image_key(args.character, filename))
            pictures[key] = (obj["Body"].read(), obj.get("ContentType", "image/svg+xml"))
    args.output.write_text(contact_sheet(args.character, name, pictures), encoding="utf-8")
    print(f"wrote {args.output} ({len(pictures)} expressions)")
    return 0


def contact_sheet(character: str, name: str, pictures: dict[str, tuple[bytes, str]]) -> str:
    order = [k for k in ex.BASIC if k in pictures] + sorted(k for k in pictures if k not in ex.BASIC)
    cells = []
    for key in order:
        data, ctype = pictures[key]
        uri = f"data:{ctype};base64,{base64.b64encode(data).decode()}"
        cells.append(f'<figure><img src="{uri}" alt="{html.escape(key)}"><figcaption>{html.escape(key)}'
                     f'</figcaption></figure>')
    title = html.escape(f"{name} ({character})")
    return ("<!doctype html><html lang=\"ja\"><head><meta charset=\"utf-8\"><title>" + title + "</title>"
            "<style>body{font-family:sans-serif;margin:16px;background:#f4f6f8}"
            ".row{display:flex;gap:12px;flex-wrap:nowrap;overflow-x:auto}"
            "figure{margin:0;background:#fff;border-radius:8px;padding:8px;text-align:center}"
            "img{width:200px;height:250px;object-fit:contain;display:block}</style></head><body>"
            f"<h1>{title}</h1><div class=\"row\">" + "".join(cells) + "</div></body></html>\n")
