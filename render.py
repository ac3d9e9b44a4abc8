#!/usr/bin/env python3
"""onepass: render chapters of the explainer film of one GPT-2 forward pass.

    python render.py --chapter 02
    python render.py --chapter 04 --prompt "The capital of Pakistan is"
    python render.py --chapter 02 --weights random --quality low
    python render.py --inspect [--json]
    python render.py --list
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

# Nothing imported here brings in manim or torch: a re-run whose scenes are all cached
# finishes in about a second (manim is imported by the scene processes, torch by an extraction).
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402
from rich.progress import Progress  # noqa: E402
from rich.table import Table  # noqa: E402

from data import bundle as bundle_io  # noqa: E402
from data import extract, tokenizer  # noqa: E402
from data.bundle import BundleError  # noqa: E402
from data.extract import ExtractError  # noqa: E402
from data.flops import NOT_COUNTED  # noqa: E402
from film import batch, build, executors  # noqa: E402
from film import clips as film_clips  # noqa: E402
from film import slides as film_slides  # noqa: E402
from scenes.registry import chapters, scenes_of  # noqa: E402
from voiceover import audio, script, services  # noqa: E402

DEFAULT_PROMPT = "The cat sat on the"
QUALITIES = ("low", "medium", "high", "4k")


class UserError(Exception):
    """A problem the user can fix; printed without a traceback."""


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="render.py", description="Render onepass chapters from GPT-2's real numbers.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--chapter", help="chapter number, e.g. 02 (see --list)")
    what.add_argument("--all", action="store_true", help="render every chapter")
    what.add_argument("--list", action="store_true", help="list chapters and their scenes")
    what.add_argument("--inspect", action="store_true", help="print tokens, top next tokens and the FLOPs ledger; no video")
    what.add_argument("--batch", type=Path, metavar="COURSE.toml",
                      help="render every [[job]] of a manifest (examples/course.toml; film/batch.py)")
    p.add_argument("--prompt", default=DEFAULT_PROMPT, help=f"text to run through GPT-2 (default: {DEFAULT_PROMPT!r})")
    p.add_argument("--weights", default="auto",
                   help="'auto' (default: real GPT-2 if it is on this machine, else random with a warning), "
                        "'gpt2' (hub id; downloads once), a local directory, 'random' (GPT-2 small's "
                        "shapes, seeded random numbers), 'peaked' (the same, scaled so predictions are as "
                        "peaked as a trained model's: for reviewing layouts) or 'tiny' (a 2-layer test model)")
    p.add_argument("--bundle", type=Path, help="render from an existing bundle directory instead of extracting")
    p.add_argument("--quality", default="low", choices=QUALITIES, help="low 480p15, medium 720p30, high 1080p60, 4k")
    p.add_argument("--out", type=Path, default=ROOT / "out", help="output directory (default: out/)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="scenes rendered at once, each in its own process (default: the number of cores)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="render scenes on a dask cluster: tcp://HOST:PORT (a running scheduler) or local:N (N worker "
                        "processes here); default $ONEPASS_DASK_SCHEDULER, else the local process pool (docs/CLUSTER.md)")
    p.add_argument("--force", action="store_true",
                   help="re-render every scene, even those whose identical render is cached")
    p.add_argument("--voice", default="auto",
                   help="narration voice: auto (default: best installed, piper > festival > espeak), piper, "
                        "PATH.onnx (a local piper voice), espeak[:VOICE], festival[:VOICE], recorded[:DIR] "
                        "(clips named by line id, e.g. ch02-intro.wav), gtts/openai/azure/elevenlabs/gemini "
                        "(network, credentials from the environment), or none (silent, same timing)")
    p.add_argument("--burn-captions", action="store_true", help="also draw the captions into the picture")
    p.add_argument("--clips", action="store_true",
                   help="also cut each chapter into one clip per narration beat (clips/chNN-<beat>.mp4, its "
                        "captions and poster, clips.json); nothing is rendered again")
    p.add_argument("--clip-format", choices=film_clips.FORMATS, default=None,
                   help="with --clips/--slides: mp4 (H.264/AAC, default), webm (VP9/Opus) or gif (smaller, no audio)")
    p.add_argument("--slides", action="store_true",
                   help="also write a lecture deck, one slide per beat: clips/index.html (offline) and a .pptx")
    p.add_argument("--json", action="store_true", help="with --inspect: one JSON object on stdout")
    args = p.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        p.error(f"--jobs must be at least 1 (got {args.jobs})")
    if args.clip_format and not (args.clips or args.slides):
        p.error("--clip-format needs --clips or --slides")
    if (args.clips or args.slides) and not (args.chapter or args.all):
        p.error("--clips and --slides need --chapter NN or --all")
    return args


def normalise_chapter(chapter: str, known: dict[str, str]) -> str:
    c = chapter.strip().lower().removeprefix("ch")
    c = c.zfill(2) if c.isdigit() else c
    if c not in known:
        listing = ", ".join(f"{k} ({t})" for k, t in known.items())
        raise UserError(f"there is no chapter {chapter!r}. Chapters that exist: {listing}")
    return c


def check_tools():
    missing = [t for t in ("ffmpeg", "ffprobe") if shutil.which(t) is None]
    if missing:
        raise UserError(f"{', '.join(missing)} not found on PATH. Install it (Debian: apt-get install ffmpeg, "
                        "or run `make bootstrap`) and try again.")


def check_out(out: Path):
    """--out must be a folder this user may write in, or one that can be made: checked before
    anything is extracted or rendered, so a bad --out is refused up front, never mid-render."""
    out = Path(out)
    if os.path.lexists(out) and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a folder; pass a folder (it is created if missing)")
    probe = out
    while not os.path.lexists(probe) and probe.parent != probe:   # the nearest part of it that exists
        probe = probe.parent
    if not probe.is_dir():
        raise UserError(f"--out {out} cannot be created: {probe} is a file, not a folder; pass another folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        what = "cannot be written to" if probe == out else f"cannot be created (no permission to write in {probe})"
        raise UserError(f"--out {out} {what}; pass a folder you can write to, e.g. --out ~/onepass-out")


def os_error_line(exc: OSError, out: Path | None) -> str:
    """One line for a file that could not be read or written: what, where, what to do."""
    where = exc.filename if exc.filename is not None else "(no path given)"
    what = exc.strerror or str(exc)
    try:
        in_out = out is not None and Path(where).resolve().is_relative_to(Path(out).resolve())
    except (OSError, ValueError, TypeError):
        in_out = False
    if exc.errno == errno.ENOSPC:
        todo = "free some space on that disk (or pass --out a folder on another one) and run again"
    elif in_out:
        todo = "pass --out a folder you can write to"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        todo = "check that path's permissions and run again"
    else:
        todo = "check that path and run again"
    return f"{what}: {where}; {todo} (finished files were left as they were)"


# failures the user can act on: their message is the line shown (what, where, what to do)
EXPECTED = (UserError, BundleError, ExtractError, services.VoiceError, build.PipelineError)


def failure_line(exc: Exception, out: Path | None) -> str | None:
    """The one line an expected failure ends with (exit status 2), or None for a bug."""
    if isinstance(exc, EXPECTED):
        return str(exc)
    if isinstance(exc, subprocess.CalledProcessError):     # a tool (ffmpeg, ffprobe) refused its input
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        last = err.strip().splitlines()[-1:] or [""]
        return (f"{Path(str(exc.cmd[0])).name} failed (exit {exc.returncode}) {last[0][:200]}: "
                f"{' '.join(map(str, exc.cmd))[:300]}; finished files were left as they were")
    if isinstance(exc, OSError):                           # a file that could not be read or written
        return os_error_line(exc, out)
    return None


def get_bundle(args, console):
    if args.bundle:
        return bundle_io.load(args.bundle)
    with console.status("extracting tensors from GPT-2 …"):
        return extract.extract(args.prompt, args.weights, log=lambda m: console.print(f"[dim]{escape(m)}[/dim]"))


def inspect(bundle, as_json: bool, console):
    probs = bundle.last_probs
    top = [{"rank": r + 1, "id": int(i), "token": tokenizer.decode([int(i)]), "prob": float(probs[i])}
           for r, i in enumerate(bundle.meta["top_ids"])]
    ledger = bundle.ledger()
    report = {
        "prompt": bundle.prompt, "bundle": str(bundle.path), "model_id": bundle.meta["model_id"],
        "synthetic_weights": bundle.synthetic, "weights_sha256": bundle.meta["weights"]["sha256"],
        "tokens": [{"index": i, "token": t, "id": int(x)} for i, (t, x) in enumerate(zip(bundle.tokens, bundle.ids))],
        "top_next_tokens": top, "flops": ledger.as_dicts(), "flops_total": ledger.total, "flops_note": NOT_COUNTED,
    }
    if as_json:
        print(json.dumps(report, ensure_ascii=False))
        return
    console = Console()  # the report itself goes to stdout; progress and errors to stderr
    t = Table(title=escape(f"tokens of {bundle.prompt!r}"))   # prompts may look like rich markup
    for col in ("#", "token", "id"):
        t.add_column(col, justify="right" if col != "token" else "left")
    for row in report["tokens"]:
        t.add_row(str(row["index"]), escape(repr(row["token"])), str(row["id"]))
    console.print(t)
    t = Table(title="top next tokens" + (" (synthetic weights: not GPT-2's predictions)" if bundle.synthetic else ""))
    for col in ("rank", "token", "id", "probability"):
        t.add_column(col, justify="right" if col != "token" else "left")
    for row in top:
        t.add_row(str(row["rank"]), escape(repr(row["token"])), str(row["id"]), f"{100 * row['prob']:.3g}%")
    console.print(t)
    t = Table(title=f"FLOPs ledger ({NOT_COUNTED})")
    for col in ("step", "formula", "FLOPs", "running total"):
        t.add_column(col, justify="right" if col in ("FLOPs", "running total") else "left")
    for e in ledger.entries:
        t.add_row(e.step, e.formula, f"{e.flops:,}", f"{e.total:,}")
    console.print(t)


def render_chapters(todo: list[str], bundle, args, narrator, console) -> list[Path]:
    """Every scene of `todo` in its own process, --jobs at a time, skipping scenes whose identical
    render is cached; each chapter joined, captioned and thumbnailed (film/build.py).

    narrator: the speech service (choose_voice); the scene processes make the same voice from
    its spec, and its per-line clip keys go into the scene keys."""
    options = build.BuildOptions(quality=args.quality, out=args.out, jobs=args.jobs, voice=narrator.spec,
                                 voice_service=narrator, voiced=not narrator.silent, force=args.force,
                                 burn_captions=args.burn_captions,
                                 log=lambda line: console.print(f"[yellow]{line}[/yellow]", highlight=False))
    try:
        with open_executor(args, console) as executor, Progress(console=console, transient=False) as progress:
            options.progress, options.executor = progress, executor
            results = build.render(todo, bundle, options)
    except build.PipelineError as exc:
        raise UserError(str(exc)) from None
    for r in results:
        fresh = sum(not s.cached for s in r.scenes)
        console.print(f"chapter {r.chapter}: {fresh} of {len(r.scenes)} scenes rendered, "
                      f"{len(r.scenes) - fresh} from the cache" + ("" if r.joined else "; joined file unchanged"))
        cue_lists = [json.loads(s.job.cues.read_text(encoding="utf-8")) for s in r.scenes]
        narration_report(r.report, cue_lists, narrator, console)
    finals = [r.final for r in results] + lecture_kit(results, args, console)
    if args.all and len(results) > 1:
        with console.status("joining the chapters into one film with chapter markers …"):
            finals.append(build.join_film(results, build.destination(args.out, bundle, args.quality)))
    return finals


def lecture_kit(results, args, console) -> list[Path]:
    """--clips / --slides: a clip per beat, cut from the chapters just joined (film/clips.py),
    and the decks that play them (film/slides.py)."""
    if not (args.clips or args.slides):
        return []
    fmt = args.clip_format or "mp4"
    out: list[Path] = []
    try:
        with console.status("cutting a clip per beat …"):
            if args.clips:
                for r in results:
                    cs = film_clips.write_clips(r, fmt)
                    console.print(f"chapter {r.chapter}: {len(cs.entries)} {fmt} clips, {cs.cut} cut, "
                                  f"{cs.kept} unchanged")
                out.append(results[0].final.parent / film_clips.FOLDER / film_clips.INDEX)
            if args.slides:
                deck = film_slides.write_deck(results, fmt)
                console.print(f"deck: {deck.slides} slides" + ("" if deck.written else " (unchanged)"))
                out += [deck.html, deck.pptx]
    except film_clips.ClipError as exc:
        raise UserError(str(exc)) from None
    return out



class _NoExecutor:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def open_executor(args, console):
    """--scheduler (or $ONEPASS_DASK_SCHEDULER): scenes on a dask cluster; else build.render's own pool."""
    executor = executors.open_executor(args.scheduler, args.jobs)
    if executor is None:
        return _NoExecutor()
    console.print(f"scenes render on the {executor.describe()}")
    return executor


def render_batch(args, console) -> int:
    """--batch: every job of the manifest (film/batch.py); exit 1 when a job failed."""
    try:
        jobs = batch.load_manifest(args.batch)      # every problem of the file at once; nothing started
    except batch.ManifestError as exc:
        raise UserError(str(exc)) from None
    check_tools()
    try:
        reports = batch.run(jobs, scheduler=args.scheduler, workers=args.jobs, force=args.force, console=console)
    except build.PipelineError as exc:
        raise UserError(str(exc)) from None
    batch.summary(reports, console)
    return 1 if any(r.error for r in reports) else 0


def choose_voice(spec: str, console):
    """The narration service for --voice (validated before anything renders); logs which."""
    try:
        service = services.make_service(spec)
    except services.VoiceError as exc:
        raise UserError(f"--voice {spec}: {exc}") from None
    console.print(f"voice: {service.describe()}" + (" [dim](best installed)[/dim]" if spec == "auto" else ""))
    return service


def check_recordings(service, chapters_todo: list[str], bundle):
    """With recorded clips: list every missing one before anything renders."""
    if not isinstance(service, services.RecordedService):
        return
    ledger = bundle.ledger()
    wanted = [(script.line_id(c, beat), text) for c in chapters_todo
              for beat, text in script.chapter_lines(c, bundle, ledger).items()]
    missing = service.missing(wanted)
    if missing:
        raise UserError(str(services.MissingClips(service.folder, missing)))


def narration_report(report: dict, cue_lists: list[list[dict]], service, console):
    """Loudness, cache use and dead air, so a render log says how the narration came out."""
    cues = [c for cl in cue_lists for c in cl]
    if service.silent:
        console.print(f"narration: silent ({len(cues)} lines timed at the estimated speaking rate)")
        return
    fresh = sum(1 for c in cues if c.get("cached") is False)
    console.print(f"narration: {len(cues)} lines ({fresh} synthesised, {len(cues) - fresh} from cache); "
                  f"{report['lufs']:.1f} LUFS integrated, true peak {report['true_peak_dbtp']:.1f} dBTP "
                  f"(target {audio.TARGET_LUFS:g} LUFS, ceiling {audio.CEILING_DBTP:g} dBTP); 48 kHz AAC")
    for a, b in report.get("dead_air", []):
        console.print(f"[yellow]dead air[/yellow] {b - a:.1f} s of silence at {int(a // 60)}:{a % 60:04.1f}")


def _terminated(signum, frame):
    raise KeyboardInterrupt       # SIGTERM stops a render the way Ctrl-C does: scene processes ended, nothing lost


def main(argv=None) -> int:
    console = Console(stderr=True)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    args = parse_args(argv)
    try:
        known = chapters()
        if args.list:
            for c, title in known.items():
                print(f"{c}  {title}: {', '.join(cls.__name__ for cls in scenes_of(c))}")
            return 0
        if args.batch:
            return render_batch(args, console)
        if not (args.inspect or args.all or args.chapter):
            raise UserError("say what to render: --chapter NN, --all, --inspect or --list (see --help)")
        todo = list(known) if args.all else ([normalise_chapter(args.chapter, known)] if args.chapter else [])
        narrator = None
        if todo:
            check_tools()
            check_out(args.out)
            narrator = choose_voice(args.voice, console)
        bundle = get_bundle(args, console)
        if args.inspect:
            inspect(bundle, args.json, console)
            return 0
        if bundle.synthetic:
            console.print("[yellow]synthetic weights: every frame is marked; predictions are not GPT-2's[/yellow]")
        check_recordings(narrator, todo, bundle)
        for path in render_chapters(todo, bundle, args, narrator, console):
            console.print(f"[green]wrote[/green] {escape(str(path))}")
        return 0
    except KeyboardInterrupt:
        console.print("[red]interrupted[/red]: finished files were left as they were; nothing half-written replaced them")
        return 130
    except Exception as exc:      # the one place failures end: one clear line (exit 2), or a bug's traceback
        line = failure_line(exc, args.out)
        if line is None:
            traceback.print_exc()
            console.print("[red]this is a bug in onepass[/red], not a problem with your input: please report it "
                          "(the command you ran and the traceback above) on onepass's issue tracker", soft_wrap=True)
            return 1
        console.print(f"[red]error:[/red] {escape(line)}", soft_wrap=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
