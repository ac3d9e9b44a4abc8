"""A whole course in one command: `render.py --batch course.toml`.

    [[job]]
    name = "lecture 3"                 # optional: how the summary names the job
    prompt = "The cat sat on the"
    chapters = ["00", "02"]            # or "all" (also joins the film with chapter markers)
    quality = "low"                    # draft | low | medium | high | 4k  (default low)
    voice = "none"                     # any --voice                       (default auto)
    model = "gpt2-medium"              # distilgpt2 | gpt2 | gpt2-medium | gpt2-large | gpt2-xl
                                       # (default: the weights' own, else gpt2)
    weights = "random"                 # auto | a hub id | random | peaked | mini | tiny | DIR (default auto)
    burn_captions = false
    clips = false                      # the lecture kit (film/kit/clips.py, film/kit/slides.py)
    clip_format = "mp4"                # mp4 | webm | gif, with clips or slides
    slides = false
    handout = false                    # handout-chNN.pdf (film/kit/handout.py)
    paper = "a4"                       # a4 | letter, with handout
    stills = "png"                     # each beat's settled frame as a file (film/kit/handout.py)
    notebook = false                   # chNN.ipynb (film/kit/notebook.py)
    publish = false                    # chNN.description.txt, chNN.thumbnail.png (film/kit/publish.py)
    out = "out/course"                 # relative to the manifest's folder (default out)
    watch = " mat"                     # chapter 04's token of interest (default: the prompt's)

1. `load_manifest` validates the whole file first: unknown keys, bad values, duplicate jobs
   and jobs that would overwrite each other's files are reported together (job number and
   key), and nothing starts (ManifestError, exit 2).
   Each job is a request (film/make/request.py: the same keys, defaults and checks as render.py's
   flags, `watch` included).
2. Every bundle is extracted (once per distinct prompt, weights, model and watch token), then every scene of every
   job is planned; a scene cached under another job's name is copied, not rendered.
3. Every job's build runs at once on one executor (film/run/executors.py: the local pool or a dask
   cluster), so every scene is one task and a scene several jobs share (same cache key) is
   rendered once. Jobs that write into the same folder run one after the other.
4. One progress display; a summary table at the end; a failed job stops no other, and the
   summary and the exit code (1) say which failed and why.
"""
from __future__ import annotations

import threading
import time
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from onepass.data.errors import OnepassError
from onepass.data import extract
from onepass.data.extract import ExtractError
from onepass.film.run import executors
from onepass.film.make import request
from onepass.film.run import scheduler as scheduler_module
from onepass.film.plan.jobs import BuildOptions, destination, plan
from onepass.film.plan.keys import PipelineError
from onepass.film.make.request import Request


class ManifestError(OnepassError, ValueError):
    """Everything wrong with a manifest, one problem a line."""

    def __init__(self, path: Path, problems: list[str]):
        self.path, self.problems = path, problems
        super().__init__(f"{path}: {len(problems)} problem{'s' * (len(problems) != 1)}, nothing rendered:\n"
                         + "\n".join(f"  {p}" for p in problems))


@dataclass
class Job(Request):
    """One [[job]]: its request (film/make/request.py) and where it is in the file."""
    number: int = 0              # 1-based, in file order

    @property
    def label(self) -> str:
        return f"job {self.number}" + (f" ({self.name})" if self.name else "")


@dataclass
class JobReport:
    job: Job
    files: list[Path] = field(default_factory=list)
    scenes: int = 0
    rendered: int = 0
    cached: int = 0
    shared: int = 0              # copied from another job's render of the same scene
    wall: float = 0.0
    error: str | None = None


# ---------------------------------------------------------------------------------------
# The manifest

def load_manifest(path: Path) -> list[Job]:
    """The jobs of a manifest, or ManifestError listing every problem in it."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(path, ["no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(path, [f"cannot be read: {exc}"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(path, [f"not valid TOML: {exc}"]) from None
    problems: list[str] = []
    for key in data:
        if key != "job":
            problems.append(f"top level, {key}: unknown key; a manifest is a list of [[job]] tables")
    tables = data.get("job", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        return _raise(path, problems + ["job: write each job as a [[job]] table"])
    if not tables:
        problems.append("no [[job]] tables: nothing to render")
    base = path.resolve().parent
    jobs: list[Job] = []
    voices: dict[str, object] = {}           # one voice is made (and checked) once for every job
    for n, table in enumerate(tables, 1):
        req, found = request.validate(table, base, spelling=request.MANIFEST, services=voices)
        problems += [f"job {n}, {key}: {message}" for key, message in found]
        if req is not None:
            jobs.append(Job(**{f.name: getattr(req, f.name) for f in fields(Request)}, number=n))
    # jobs that repeat another, or write the same files differently: compared by the folder each
    # writes into with its model and weights resolved ("auto" is "random" on a machine without the
    # model's weights; two models never share a folder)
    model = {j.number: extract.effective_model(j.weights, j.model) for j in jobs}
    resolved = {j.number: extract.resolve_weights(j.weights, lambda m: None, model[j.number]) for j in jobs}
    problems += [why for _, why in clashes(jobs, lambda j: (str(j.out), j.prompt, resolved[j.number], model[j.number],
                                                            j.quality, j.lang))]
    return _raise(path, problems) if problems else jobs


def clash(a: Job, b: Job) -> str | None:
    """Why job `a` would overwrite (or repeat) job `b`, both writing into one folder; None if it
    would not: a chapter is one file per folder, whatever voice, watch token, words or burned
    captions made it; clips are one set per chapter, in one format."""
    made = lambda j: (j.voice, j.watch, j.script, j.burn_captions)  # noqa: E731  what a chapter's file holds
    overlap = sorted(set(a.chapters) & set(b.chapters))
    kit = lambda j: (j.clips, j.clip_format, j.slides, j.handout, j.paper, j.stills, j.notebook, j.publish)  # noqa: E731
    if (a.chapters, made(a), kit(a)) == (b.chapters, made(b), kit(b)):
        return f"job {a.number}: repeats job {b.number} (same prompt, model, weights, quality, chapters, voice and out)"
    if overlap and made(a) != made(b):
        return (f"job {a.number}, out: would overwrite job {b.number}'s chapter {', '.join(overlap)} (same prompt, "
                "model, weights, quality and out, another voice, watch, script or burn_captions); give one of them its own out")
    if overlap and a.handout and b.handout and (a.paper or "a4") != (b.paper or "a4"):
        return (f"job {a.number}, paper: would overwrite job {b.number}'s handout of chapter "
                f"{', '.join(overlap)} on other paper; give one of them its own out")
    if overlap and (a.clips or a.slides) and (b.clips or b.slides) and a.clip_format != b.clip_format:
        return (f"job {a.number}, clip_format: would overwrite job {b.number}'s clips of chapter "
                f"{', '.join(overlap)} in another format; give one of them its own out")
    return None


def clashes(jobs: list[Job], folder) -> list[tuple[Job, str]]:
    """(job, why) for every job that would overwrite an earlier one writing into the same `folder(job)`."""
    problems, earlier = [], {}             # folder -> the jobs before, in file order (1,000 jobs: no n² folders)
    for a in jobs:
        same = earlier.setdefault(folder(a), [])
        for b in same:
            if why := clash(a, b):
                problems.append((a, why))
                break                      # one such problem per job is enough
        same.append(a)
    return problems


def _raise(path, problems):
    raise ManifestError(path, problems)


# ---------------------------------------------------------------------------------------
# Running it

def _outputs(results, film: Path | None) -> list[Path]:
    files = [p for r in results for p in (r.final, r.final.with_suffix(".srt"), r.final.with_suffix(".vtt"),
                                          r.final.with_suffix(".png"))]
    if film is not None:
        files += [film, film.with_suffix(".srt"), film.with_suffix(".vtt")]
    return [p for p in files if p.exists()]


def run(jobs: list[Job], *, scheduler: str | None = None, workers: int | None = None, force: bool = False,
        console=None, executor: executors.Executor | None = None) -> list[JobReport]:
    """Render every job (see the module docstring) on `executor`, or on the one --scheduler names
    (default: a local pool of `workers` processes); returns one report per job, in order."""
    if executor is not None:
        return _run(jobs, executor, force, console)
    # opened first: a scheduler that does not answer is reported before anything is extracted
    with scheduler_module.open_executor(scheduler, workers) as mine:
        if console is not None:      # what a cluster waits for, above the progress display
            mine.log = lambda line: console.print(line, style="yellow", markup=False, highlight=False)
        return _run(jobs, mine, force, console)


def _run(jobs: list[Job], executor: executors.Executor, force: bool, console) -> list[JobReport]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    # rich only draws here: imported when a batch runs (a job's files do not depend on it)
    reports = {j.number: JobReport(j) for j in jobs}
    log = (lambda m: console.print(m, style="dim", markup=False, emoji=False, highlight=False)) \
        if console is not None else (lambda m: None)

    # 1. bundles, once per distinct prompt, weights, model and watch token
    bundles: dict[tuple, object] = {}
    for j in jobs:
        k = _bundle_key(j)
        if k in bundles:
            continue
        try:
            bundles[k] = request.get_bundle(j, log)
        except ExtractError as exc:
            bundles[k] = exc
    for j in jobs:
        if isinstance(bundles[_bundle_key(j)], Exception):
            reports[j.number].error = f"extraction failed: {bundles[_bundle_key(j)]}"
    # the folder each job writes into, known for sure now that its bundle is: a clash the manifest
    # could not see (two weights that are the same model) fails the later job, never overwrites
    folder = {j.number: destination(j.out, bundles[_bundle_key(j)], j.quality, j.lang)
              for j in jobs if not reports[j.number].error}
    ready = [j for j in jobs if j.number in folder]
    for j, why in clashes(ready, lambda j: folder[j.number]):
        reports[j.number].error = why

    # 2. every scene planned; one already rendered under another job's name is copied
    options: dict[int, BuildOptions] = {}
    scenes = []
    for j in jobs:
        if reports[j.number].error:
            continue
        j.force = force
        options[j.number] = request.build_options(j)
        try:
            planned = plan(j.chapters, bundles[_bundle_key(j)], options[j.number])
        except PipelineError as exc:
            reports[j.number].error = str(exc)
            continue
        reports[j.number].scenes = sum(len(v) for v in planned.values())
        scenes += [s for v in planned.values() for s in v]
    copied = share_cached(scenes) if not force else set()
    total = sum(r.scenes for r in reports.values())

    if console is not None:
        console.print(f"batch: {len(jobs)} jobs, {total} scenes, on {executor.describe()}")
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                        console=console, transient=False, disable=console is None)
    lock = threading.Lock()
    with progress:
        overall = progress.add_task(f"all jobs (0 of {len(options)} done)", total=total)
        bars = {n: progress.add_task(f"  {_short(reports[n].job)}", total=reports[n].scenes) for n in options}
        finished = [0]

        def run_job(j: Job):
            rep, t0 = reports[j.number], time.perf_counter()

            def on_scene(r):
                with lock:
                    if not r.cached:
                        rep.rendered += 1
                    elif r.job.stem in executor.shared or r.job.stem in copied:
                        rep.shared += 1
                    else:
                        rep.cached += 1
                progress.advance(bars[j.number])
                progress.advance(overall)

            o = options[j.number]
            o.executor, o.on_scene = executor, on_scene
            try:
                made = request.produce(j, bundles[_bundle_key(j)], o)
                rep.files = _outputs(made.results, made.film) + made.kit
            except PipelineError as exc:
                rep.error = str(exc)
            except Exception as exc:    # noqa: BLE001 - one job's failure stops no other job
                rep.error = f"{type(exc).__name__}: {exc}"
            rep.wall = time.perf_counter() - t0
            with lock:
                finished[0] += 1
                progress.update(overall, description=f"all jobs ({finished[0]} of {len(options)} done)")
                if rep.error:
                    progress.update(bars[j.number], description=f"  {_short(j)} [red]failed[/red]")

        # jobs writing into the same folder run one after the other (they share its joins and
        # timings); the others at once
        groups: dict[Path, list[Job]] = {}
        for j in jobs:
            if j.number in options:
                groups.setdefault(folder[j.number], []).append(j)
        threads = [threading.Thread(target=lambda g=g: [run_job(j) for j in g], name="batch-job", daemon=True)
                   for g in groups.values()]
        try:
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(0.2)
        except BaseException:
            executor.stop()
            raise
    return [reports[j.number] for j in jobs]


def _bundle_key(j: Job) -> tuple:
    return (j.prompt, j.weights, j.model, j.watch)


def _short(j: Job) -> str:
    from rich.markup import escape   # a prompt may look like rich markup
    prompt = j.prompt if len(j.prompt) <= 24 else j.prompt[:23] + "…"
    model = f" {j.model}" if j.model else ""
    return escape(f"{j.label}: {prompt!r}{model} {'all' if j.all else ' '.join(j.chapters)} {j.quality}")


def share_cached(scenes) -> set[Path]:
    """Scenes of one job whose key another job has cached get a copy of that render (before
    anything runs); returns the stems filled so."""
    source: dict[str, object] = {}
    for s in scenes:
        if s.key not in source and s.cached():
            source[s.key] = s
    copied = set()
    for s in scenes:
        src = source.get(s.key)
        if src is not None and src.stem != s.stem and not s.cached():
            executors.copy_scene(src, s)
            copied.add(s.stem)
    return copied


def summary(reports: list[JobReport], console):
    """The table at the end: per job, files written, scenes rendered / cached / shared, wall time."""
    from rich.markup import escape   # drawing only; prompts may look like rich markup
    from rich.table import Table
    t = Table(title="batch summary")
    for col in ("job", "files", "rendered", "cached", "shared", "wall", "result"):
        t.add_column(col, justify="left" if col in ("job", "result") else "right",
                     overflow="fold" if col == "job" else "ellipsis")
    for r in reports:
        t.add_row(_short(r.job), str(len(r.files)), str(r.rendered), str(r.cached), str(r.shared),
                  f"{r.wall:.0f} s", "[red]failed[/red]" if r.error else "[green]ok[/green]")
    console.print(t)
    for r in reports:
        if r.error:
            console.print(f"[red]{escape(r.job.label)} failed:[/red] {escape(r.error)}", highlight=False)
