"""onepass from Python and Jupyter: one call renders what render.py's command line would.

    import onepass
    films = onepass.render(chapters="00", prompt="The cat sat on the", lang="en", quality="low",
                           weights="tiny", voice="none", out="films")
    films            # in Jupyter: the chapter's video, inline, with its captions track
    films.videos     # [Path(.../00-....mp4)]; the result is a list of every file the request wrote

Every keyword is an option of render.py (film/make/request.py's OPTIONS, by its request key:
`burn_captions=True` is `--burn-captions`); `chapters` is `--chapter` (a number, "00,02", a
list) or "all" (`--all`). The request is built and checked by the same code as the command
line's (an argparse namespace read by request.from_args), so a bad request raises the same
error with the same message (request.RequestError, a onepass.data.errors.OnepassError), with every
problem at once and before anything is extracted or rendered.
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import difflib
import html
import os
import sys
import threading
from pathlib import Path

from onepass.data.errors import OnepassError
from onepass.film.make import request
from onepass.film.run import scheduler
from onepass.film.plan.errors import PipelineError

# the keywords render() takes besides `chapters`: every option render.py has a flag for
KEYWORDS = tuple(o.key for o in request.OPTIONS if o.cli)
KINDS = {o.key: o.kind for o in request.OPTIONS}
# One bundle extracted at a time in this process: transformers imports its classes lazily, and two
# threads importing them at once got a raw ImportError; two threads asking for the same bundle would
# also both extract it. Everything after (the build, the kits) runs concurrently: two calls writing
# into one folder take turns on its lock (film/make/request.py produce), other folders at once.
_EXTRACTING = threading.Lock()


class ArgumentError(request.RequestError):
    """An argument of onepass.render of the wrong type (every one at once), named as the call names it."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        lines = [m for _, m in problems]
        Exception.__init__(self, lines[0] if len(lines) == 1 else
                           f"{len(lines)} problems, nothing rendered: " + "; ".join(lines))


def _kind_of(value) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def check_types(chapters, options: dict) -> None:
    """Each argument of the type its option takes (a text, a path, True/False, a whole number; chapters
    a number, a text or a list of them), or ArgumentError naming the argument and the type given."""
    problems = []
    if chapters is not None and not isinstance(chapters, (str, int, list, tuple)) or isinstance(chapters, bool) \
            or (isinstance(chapters, (list, tuple)) and not all(isinstance(c, (str, int)) and not isinstance(c, bool)
                                                                 for c in chapters)):
        problems.append(("chapters", "chapters= must be a chapter number, a text such as \"00,02\" or \"all\", or a "
                                     f"list of them; got {_kind_of(chapters)}"))
    for key, value in options.items():
        if value is None or key not in KINDS:
            continue
        kind = KINDS[key]
        if kind == "flag" and not isinstance(value, bool):
            problems.append((key, f"{key}= must be True or False; got {_kind_of(value)}"))
        elif kind == "count" and (not isinstance(value, int) or isinstance(value, bool)):
            problems.append((key, f"{key}= must be a whole number (int); got {_kind_of(value)}"))
        elif kind == "path" and not isinstance(value, (str, os.PathLike)):
            problems.append((key, f"{key}= must be a path (a str or a pathlib.Path); got {_kind_of(value)}"))
        elif kind in ("text", "choice") and not isinstance(value, str):
            problems.append((key, f"{key}= must be a str; got {_kind_of(value)}"))
    if problems:
        raise ArgumentError(problems)
EMBED_LIMIT = 50 * 2 ** 20      # a video outside the notebook's folder is embedded up to this size


class Rendered(list):
    """The files a render wrote (a list of Paths): the chapter videos, their captions (.vtt,
    .srt), thumbnails, descriptions tracks and transcripts, the film and whatever else the request
    asked for. In Jupyter it shows each chapter's video with its captions track."""

    def __init__(self, files=(), *, videos=(), lang: str = "en", titles=()):
        super().__init__(files)
        self.videos: list[Path] = list(videos)        # one MP4 per chapter (then the film, with --all)
        self.lang = lang
        self.titles: list[str] = list(titles)

    @property
    def captions(self) -> list[Path]:
        """The captions (WebVTT) of each video, in the order of `videos`."""
        return [v.with_suffix(".vtt") for v in self.videos]

    def __repr__(self) -> str:
        lines = [f"Rendered({len(self)} file{'s' * (len(self) != 1)}"] + [f"  {p}" for p in self] + [")"]
        return "\n".join(lines) if self else "Rendered(no files)"

    def _repr_pretty_(self, p, cycle):                 # IPython's plain text: the listing above
        p.text(repr(self))

    def _repr_html_(self) -> str:
        parts = []
        for n, video in enumerate(self.videos):
            title = self.titles[n] if n < len(self.titles) else video.stem
            tracks = []
            vtt = video.with_suffix(".vtt")
            if vtt.exists():
                tracks.append(f'<track kind="captions" src="{_src(vtt, "text/vtt")}" '
                              f'srclang="{html.escape(self.lang)}" label="{html.escape(self.lang)}" default>')
            described = video.with_suffix(".descriptions.vtt")
            if described.exists():
                tracks.append(f'<track kind="descriptions" src="{_src(described, "text/vtt")}" '
                              f'srclang="{html.escape(self.lang)}">')
            parts.append(f'<figure style="margin:0 0 1em 0"><video controls width="640" '
                         f'src="{_src(video, "video/mp4")}">{"".join(tracks)}</video>'
                         f'<figcaption>{html.escape(title)}</figcaption></figure>')
        files = "".join(f"<li><code>{html.escape(str(p))}</code></li>" for p in self)
        parts.append(f"<details><summary>{len(self)} files written</summary><ul>{files}</ul></details>")
        return "".join(parts)


def _src(path: Path, mime: str) -> str:
    """How a notebook's page reaches a file: relative to the notebook's folder (the kernel's
    current folder) when it is under it, else the file itself as a data: URI (a page cannot
    read a path outside the server's folder), else its file:// address."""
    path = Path(path).absolute()
    try:
        return html.escape(Path(os.path.relpath(path)).as_posix()) if path.is_relative_to(Path.cwd()) \
            else _embedded(path, mime)
    except ValueError:            # another drive (Windows)
        return _embedded(path, mime)


def _embedded(path: Path, mime: str) -> str:
    if path.stat().st_size > EMBED_LIMIT:
        return html.escape(path.as_uri())
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def namespace(chapters=None, **options) -> argparse.Namespace:
    """The argparse namespace render.py would parse for these keywords (`--chapter`/`--all` and
    every option flag), with the user's defaults from the environment filled in as render.py does.
    TypeError for a keyword render.py has no flag for."""
    unknown = [k for k in options if k not in KEYWORDS]
    if unknown:
        near = difflib.get_close_matches(unknown[0], KEYWORDS + ("chapters",), n=1)
        raise TypeError(f"render() got an unexpected keyword argument {unknown[0]!r}"
                        + (f" (did you mean {near[0]!r}?)" if near else f"; it takes chapters, {', '.join(KEYWORDS)}"))
    args = argparse.Namespace(chapter=None, all=False, **{k: None for k in KEYWORDS})
    if isinstance(chapters, str) and chapters.strip().lower() == "all":
        args.all = True
    elif isinstance(chapters, (list, tuple)):
        args.chapter = ",".join(str(c) for c in chapters) or None
    elif chapters is not None and chapters != "":
        args.chapter = str(chapters) if not isinstance(chapters, str) else chapters
    for key, value in options.items():
        setattr(args, key, os.fspath(value) if isinstance(value, os.PathLike) else value)
    request.fill_user_defaults(args)      # the documented user defaults, as render.py reads them
    return args


def check_recordings(req: request.Request, bundle, log):
    """With recorded clips (--voice recorded:DIR): every missing clip, and every clip that is not a
    reading of its line, refused before anything renders (render.py's check, same messages)."""
    from onepass.voiceover import script, services      # noqa: PLC0415
    service = req.service
    if not isinstance(service, services.RecordedService):
        return
    ledger = bundle.ledger()
    lines = [(script.line_id(c, beat), line) for c in req.chapters
             for beat, line in script.chapter_lines(c, bundle, ledger, req.words).items()]
    missing = service.missing([(lid, line.text) for lid, line in lines])
    if missing:
        raise services.MissingClips(service.folder, missing)
    log(f"aligning {len(lines)} recorded lines with their text")
    problems = service.check([(lid, line.text, list(line.marks)) for lid, line in lines], req.lang)
    if problems:
        raise PipelineError(f"{len(problems)} recording(s) in {service.folder} do not match their lines; nothing "
                            "rendered:\n" + "\n".join(f"  {p}" for p in problems))


def render(chapters=None, *, prompt: str | None = None, lang: str | None = None, quality: str | None = None,
           progress: bool = True, **options) -> Rendered:
    """Render chapters as `render.py --chapter ...` does and return the files written.

        import onepass
        onepass.render(chapters="02", prompt="The capital of France is", lang="es", quality="low")

    chapters: "02", 2, "00,02", ["00", "02"] or "all"; prompt, lang, quality and every other
    option of render.py by its request key (model, weights, watch, bundle, out, voice, script,
    burn_captions, clips, clip_format, slides, handout, paper, stills, notebook, publish,
    described, scheduler, jobs, force); anything left out takes render.py's default (out: ./out
    under the current folder). `progress=False` renders without the progress display and log.

    Raises request.RequestError (every problem of the request, the command line's message; an
    argument of the wrong type: ArgumentError, naming it and the type given) or another
    onepass.data.errors.OnepassError (extraction, voice, build) for a problem the user can fix.
    Safe to call from several threads at once: bundles are extracted one at a time, and two calls
    into one output folder take turns on its lock.
    """
    given = {k: v for k, v in (("prompt", prompt), ("lang", lang), ("quality", quality)) if v is not None}
    if not isinstance(progress, bool):
        raise ArgumentError([("progress", f"progress= must be True or False; got {_kind_of(progress)}")])
    args = namespace(chapters, **given, **options)      # unknown keywords: TypeError, as Python says it
    check_types(chapters, {**given, **options})
    req = request.from_args(args)                    # every problem at once: request.RequestError
    from rich.console import Console                 # noqa: PLC0415
    from rich.markup import escape                   # noqa: PLC0415
    from rich.progress import Progress               # noqa: PLC0415
    console = Console(stderr=True, emoji=False, quiet=not progress)
    note = lambda line: console.print(escape(line), highlight=False, soft_wrap=True)  # noqa: E731
    request.check_tools()
    note(f"voice: {req.service.describe()}")
    with contextlib.ExitStack() as stack:
        executor = stack.enter_context(scheduler.open_executor(req.scheduler, req.jobs))
        executor.log = note
        with _EXTRACTING:
            bundle = request.get_bundle(req, log=note)
        if bundle.synthetic:
            note("synthetic weights: every frame is marked; predictions are not GPT-2's")
        check_recordings(req, bundle, note)
        live = live_bar(console)
        scene_line = None if live else lambda r: note(      # noqa: E731  (no bar: a line per scene instead)
            f"chapter {r.job.chapter}: {r.job.scene} " + ("from the cache" if r.cached else f"rendered in {r.wall:.0f} s"))
        with Progress(console=console, transient=False, disable=not progress or not live) as bar:
            options = request.build_options(req, executor=executor, progress=bar, on_scene=scene_line, log=note)
            made = request.produce(req, bundle, options, log=note)
        for r in made.results:
            fresh = sum(not s.cached for s in r.scenes)
            note(f"chapter {r.chapter}: {fresh} of {len(r.scenes)} scenes rendered, {len(r.scenes) - fresh} from the cache")
    return result(made, req.lang)


def live_bar(console) -> bool:
    """rich draws a live bar in a terminal, and in Jupyter only with ipywidgets (else it warns):
    without them the log lines alone say how the render goes."""
    if not console.is_jupyter:
        return True
    import importlib.util                      # noqa: PLC0415
    return importlib.util.find_spec("ipywidgets") is not None


def result(made: request.Produced, lang: str) -> Rendered:
    """Every file of a Produced that exists, each once, videos first with their sidecars."""
    from onepass.film.kit import describe                   # noqa: PLC0415
    videos = [r.final for r in made.results] + ([made.film] if made.film else [])
    titles = [r.title for r in made.results] + (["film"] if made.film else [])
    files: list[Path] = []
    for v in videos + [p for p in made.shown if p.suffix == ".mp4" and p not in videos]:
        files += [v, v.with_suffix(".vtt"), v.with_suffix(".srt"), v.with_suffix(".png"),
                  *describe.sidecar_paths(v).values()]
    files += made.kit + made.shown
    seen, out = set(), []
    for p in files:
        p = Path(p)
        if p not in seen and p.exists():
            seen.add(p)
            out.append(p)
    return Rendered(out, videos=videos, lang=lang, titles=titles)


__all__ = ["render", "Rendered", "OnepassError"]

if __name__ == "__main__":        # python -m onepass.film.make.api: a smoke run
    print(repr(render(sys.argv[1:] or "00", weights="tiny", voice="none")))
