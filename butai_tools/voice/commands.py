"""`butai voice render|list|say`: the stage's own voice from the command line (docs/stage.md, "Voice")."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from chalicelib.voices import AUDIO_EXTENSION, DEFAULT_SPEED, DEFAULT_VOICE, VOICE_NOTES, VOICES, VoiceSpec


def register(sub) -> None:
    voice = sub.add_parser("voice", help="the stage's own Japanese voice: render a scenario's lines, list voices")
    vsub = voice.add_subparsers(dest="voice_command", metavar="ACTION")
    render = vsub.add_parser("render", help="render every authored line of a scenario ahead of time and upload "
                                            "it (cached: only lines never rendered are synthesised)")
    render.add_argument("scenario", type=Path, metavar="SCENARIO")
    render.add_argument("--aws", action="store_true", help="the AWS deployment named by the BUTAI_* variables")
    render.add_argument("--dry-run", action="store_true", help="count what would be rendered; render nothing")
    render.add_argument("--json", action="store_true", help="print the report as JSON")
    render.set_defaults(func=_render)
    lst = vsub.add_parser("list", help="the voices there are")
    lst.set_defaults(func=_list)
    say = vsub.add_parser("say", help="render one line to an MP3 file (to choose a character's voice)")
    say.add_argument("text")
    say.add_argument("-o", "--output", type=Path, required=True)
    say.add_argument("--voice", default=DEFAULT_VOICE, choices=VOICES)
    say.add_argument("--speed", type=float, default=DEFAULT_SPEED)
    say.set_defaults(func=_say)
    voice.set_defaults(func=lambda a: voice.print_help() or 2)


@dataclass
class RenderReport:
    scenario: str                    # the scenario's key in the stage's library
    lines: int = 0                   # authored lines (per character and text)
    templates: int = 0               # of which lines with slots: their fixed parts are rendered
    uploaded: int = 0                # lines whose audio was stored now
    kept: int = 0                    # lines the index already held
    failed: list[str] = field(default_factory=list)
    synthesized: int = 0             # sentences the model said now
    reused: int = 0                  # sentences kept from before
    audio_s: float = 0.0
    synth_s: float = 0.0
    wall_s: float = 0.0
    index: str = ""

    def to_dict(self) -> dict:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def render_scenario(path: Path, stages, s3, bucket: str, renderer, *, dry_run: bool = False,
                    progress=None) -> RenderReport:
    """Renders every authored line of the scenario in its characters' voices and writes the scenario's index
    (voices/lines/<scenario>): what the director looks lines up in."""
    from botocore.exceptions import ClientError

    from butai_tools.voice.lines import authored_lines
    from chalicelib.director import ScenarioLibrary
    from chalicelib.scenario import load_scenario_text
    from chalicelib.stage.audio import put_audio
    from chalicelib.stage.voices import index_key

    data = path.read_bytes()
    compiled = load_scenario_text(data.decode("utf-8"), source=path.name)
    key = ScenarioLibrary.key_of(path, data)
    report = RenderReport(scenario=key, index=index_key(key))
    try:
        before = json.loads(s3.get_object(Bucket=bucket, Key=index_key(key))["Body"].read()).get("lines", {})
    except ClientError:
        before = {}
    lines: dict[str, str] = {}
    started = time.perf_counter()
    authored = authored_lines(compiled)
    report.lines = len(authored)
    for n, line in enumerate(authored, 1):
        voice = compiled.characters[line.character].voice
        spec = stages.voice_spec(line.character,
                                 authored=VoiceSpec(voice.kokoro, voice.speed) if voice is not None else None)
        if line.template:
            report.templates += 1
        if dry_run:
            continue
        try:
            if line.template:
                for part in line.to_render():
                    _, now = renderer.sentence(part, spec)
                    report.synthesized += now
                    report.reused += not now
                continue
            line_key = spec.key(line.text)
            if before.get(line_key):
                lines[line_key] = before[line_key]
                report.kept += 1
                continue
            mp3, rendered = renderer.mp3(line.text, spec)
            lines[line_key] = put_audio(s3, bucket, mp3, AUDIO_EXTENSION)
            report.uploaded += 1
            report.synthesized += rendered.synthesized
            report.reused += rendered.reused
            report.audio_s += rendered.seconds
            report.synth_s += rendered.synth_s
        except Exception as exc:  # noqa: BLE001 - reported; the line is voiced at turn time (or the page's voice)
            report.failed.append(f"{line.where}: {line.text[:30]}: {type(exc).__name__}: {exc}")
        if progress is not None:
            progress(n, len(authored), report)
    if not dry_run:
        s3.put_object(Bucket=bucket, Key=index_key(key), ContentType="application/json",
                      Body=json.dumps({"scenario": key, "lines": lines}, ensure_ascii=False).encode())
        if stages.rendered is not None:
            stages.rendered.forget(key)       # this process looks the lines up anew
    report.wall_s = time.perf_counter() - started
    return report


def sentence_store(use_aws: bool, s3=None, bucket: str = ""):
    """Where rendered sentences are kept: beside the local run's state (and, for a deployment, in its
    bucket as well, for the voice function)."""
    from butai_tools.local.commands import local_json_path
    from butai_tools.voice.render import BucketSentences, LocalSentences, Sentences
    local = LocalSentences(local_json_path().parent / "voice" / "sentences")
    return Sentences(local, BucketSentences(s3, bucket)) if use_aws else local


def _render(args) -> int:
    from butai_tools.local.commands import target_settings
    from butai_tools.voice.engine import VoiceUnavailable, engine
    from butai_tools.voice.render import Renderer
    from chalicelib import aws, context
    from chalicelib.scenario import ScenarioError

    settings, _ = target_settings(args.aws)
    services = context.build(settings)
    s3 = aws.client("s3", settings)
    renderer = Renderer(engine(), sentence_store(args.aws, s3, settings.bucket))

    def progress(n: int, total: int, report: RenderReport) -> None:
        if not args.json and (n == total or n % 10 == 0):
            print(f"  {n}/{total} lines: {report.uploaded} rendered, {report.kept} kept, "
                  f"{report.audio_s:.0f} s of audio", file=sys.stderr, flush=True)
    try:
        report = render_scenario(args.scenario, services.stage, s3, settings.bucket, renderer,
                                 dry_run=args.dry_run, progress=progress)
    except (OSError, ScenarioError, VoiceUnavailable) as exc:
        print(f"butai: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print(f"{report.scenario}: {report.lines} lines ({report.templates} with slots: their fixed parts), "
              f"{report.uploaded} rendered now, {report.kept} kept; {report.synthesized} sentences synthesised, "
              f"{report.reused} reused; {report.audio_s:.1f} s of audio in {report.wall_s:.1f} s → {report.index}")
        for failure in report.failed:
            print(f"  not rendered (voiced at turn time or by the page): {failure}")
    return 0


def _list(args) -> int:
    for name in VOICES:
        print(f"{name:15} {VOICE_NOTES[name]}{'  (default)' if name == DEFAULT_VOICE else ''}")
    return 0


def _say(args) -> int:
    from butai_tools.voice.engine import VoiceUnavailable, engine
    from butai_tools.voice.render import Renderer
    try:
        spec = VoiceSpec(args.voice, args.speed)
        data, rendered = Renderer(engine()).mp3(args.text, spec)
    except (ValueError, VoiceUnavailable) as exc:
        print(f"butai: {exc}", file=sys.stderr)
        return 1
    args.output.write_bytes(data)
    print(f"{args.output}: {rendered.seconds:.2f} s of {AUDIO_EXTENSION} ({len(data)} bytes)")
    return 0
