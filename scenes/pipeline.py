"""The render pipeline: scene jobs -> parallel processes -> a cache -> one MP4 per chapter.

    from scenes import pipeline
    results = pipeline.render(["02", "03"], bundle, quality="low", out=Path("out"), jobs=2)

* Every scene of every requested chapter is one job, run as its own process
  (`python -m scenes.render_job`), at most `jobs` at a time (default: the cores this
  process may use), longest first by the times recorded in earlier runs.
* Every job has a cache key (`scene_key`). A scene whose key was rendered before is not
  rendered again; a chapter whose scenes all hit and whose joined MP4 was made from
  exactly those scenes is not joined again either. The key covers:
    - the bundle (its cache key = prompt + weights + schema + extraction options, and the
      checksum of its tensors): a new prompt or new weights re-renders everything;
    - the quality;
    - the scene's own code: its class (and scene classes it derives from) in the chapter
      module; the rest of that module (helpers, constants, non-scene base classes) is shared
      by every scene of the chapter;
    - every project module the chapter module imports, followed transitively (scenes.base,
      style, widgets, data.bundle, data.flops, voiceover.*, ...), plus scenes.render_job
      (it sets the frame config) and the chapter's narration script; each is compared as
      its syntax tree, so comments and formatting do not count, and the narration scripts'
      `LINES` are left out (lines are keyed per scene, below);
    - the narration lines the scene speaks (`self.beat("key")` in its code, plus literal
      beats of the shared scene code it imports, such as ChapterScene's title card; a
      computed key counts as every line of the chapter), as spoken for this bundle, and the
      voice: the speech service's own per-line cache key (text, voice, settings, mastering,
      recorded clip) when it has one;
    - manim's and Python's versions and PIPELINE_VERSION.
  Editing one scene's class or one narration line re-renders that scene only.
* Joining: the scenes' pictures are concatenated without re-encoding, each part stated
  exactly frames / fps long (no gap, no doubled frame at a join); narration, when voiced,
  is rebuilt once for the whole chapter (voiceover.mixdown), so it cannot drift.

Files live next to the chapter MP4, in `<out>/<prompt slug>/<quality>/.scenes/`:
`<chapter file>-<Scene>.<key16>.mp4|.cues.json|.json` (the last written after a successful
render: its presence is the cache entry), `<chapter file>.join.json`, `timings.json`.
"""
from __future__ import annotations

import ast
import concurrent.futures as cf
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
LOCAL_PACKAGES = ("scenes", "data", "voiceover")
PIPELINE_VERSION = 1
# modules whose code shapes every frame although no chapter module imports them
ALWAYS = ("scenes.render_job",)
# narration text is keyed per line, per scene: module-level assignments of these names are
# left out of a module's code fingerprint
NARRATION_NAMES = ("LINES",)
KEEP_VARIANTS = 3        # cached renders kept per scene (older keys are deleted)


class PipelineError(RuntimeError):
    """A scene failed to render or a chapter failed to join; the message says which and why."""


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _sha(obj) -> str:
    data = obj if isinstance(obj, bytes) else json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------
# Source fingerprints (syntax trees of project modules, read from disk: nothing imported)

def module_path(name: str, root: Path = ROOT) -> Path | None:
    """File of a project module ('scenes.widgets' -> scenes/widgets.py), None if not ours."""
    if name.split(".")[0] not in LOCAL_PACKAGES:
        return None
    base = root.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _module_name(path: Path, root: Path) -> str:
    rel = path.resolve().relative_to(root.resolve()).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """Every module name imported anywhere in the tree (function-level imports included)."""
    out = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)   # 'from voiceover import services'
    # a module also runs its packages' __init__
    for mod in list(out):
        parts = mod.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return out


@lru_cache(maxsize=256)
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def parse(path: Path) -> ast.Module:
    """The module's syntax tree (memoised on its text, so an edited file is parsed afresh)."""
    return _parse(Path(path).read_text(encoding="utf-8"))


def _is_narration(node: ast.stmt) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id in NARRATION_NAMES for t in targets)


def code_fingerprint(path: Path) -> str:
    """Hash of a module's syntax tree without its narration lines (formatting-insensitive)."""
    tree = parse(path)
    body = [n for n in tree.body if not _is_narration(n)]
    return _sha(ast.dump(ast.Module(body=body, type_ignores=[])).encode("utf-8"))


def dependencies(start: list[str], root: Path = ROOT) -> dict[str, Path]:
    """Project modules reachable from `start` by imports (transitively), name -> file."""
    seen: dict[str, Path] = {}
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = module_path(name, root)
        if path is None:
            continue
        seen[name] = path
        todo.extend(_imports(parse(path), name, path.name == "__init__.py") - seen.keys())
    return seen


@dataclass
class ChapterSource:
    """A chapter module split into what each scene owns and what its scenes share."""
    module: str
    path: Path
    scenes: list[str]                      # SCENES, in order
    common: str                            # hash of everything but the scene classes
    own: dict[str, str]                    # scene -> hash of its class and its scene bases
    beats: dict[str, list[str] | None]     # scene -> narration beats it speaks (None: can't tell)


def _scene_names(tree: ast.Module, module: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "SCENES" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Name) for e in node.value.elts):
                return [e.id for e in node.value.elts]
    # SCENES is built some other way: ask the module itself
    import importlib
    return [cls.__name__ for cls in importlib.import_module(module).SCENES]


def _spoken_beats(nodes: list[ast.AST]) -> list[str] | None:
    """Keys of `self.beat("key")` / `self.lines["key"]` / `self.lines.get("key")`; None if any key
    is computed (then the scene is keyed on every line of its chapter)."""
    beats: list[str] = []
    for top in nodes:
        for node in ast.walk(top):
            arg = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                f = node.func
                if not (f.attr == "beat" or (f.attr == "get" and isinstance(f.value, ast.Attribute)
                                             and f.value.attr == "lines")):
                    continue
                if not node.args:
                    return None
                arg = node.args[0]
            elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "lines":
                arg = node.slice
            else:
                continue
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                return None
            if arg.value not in beats:
                beats.append(arg.value)
    return beats


def shared_beats(deps: dict[str, Path]) -> list[str] | None:
    """Beats spoken by shared scene code (ChapterScene's narrated title card, say): the literal
    `.beat("key")` calls in the scenes.* modules a chapter imports, other chapters' modules
    excepted. They count for every scene of the chapter. None if one of them is computed."""
    beats: list[str] = []
    for name, path in deps.items():
        if not name.startswith("scenes.") or re.match(r"scenes\.ch\d+_", name):
            continue
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "beat":
                arg = node.args[0] if node.args else None
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    return None
                if arg.value not in beats:
                    beats.append(arg.value)
    return beats


def chapter_source(module: str, root: Path = ROOT) -> ChapterSource:
    path = module_path(module, root)
    if path is None:
        raise PipelineError(f"chapter module {module} not found under {root}")
    tree = parse(path)
    names = _scene_names(tree, module)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in names}
    common_nodes = [n for n in tree.body if not (isinstance(n, ast.ClassDef) and n.name in names)]
    common = _sha(ast.dump(ast.Module(body=common_nodes, type_ignores=[])).encode("utf-8"))
    common_beats = _spoken_beats(common_nodes)

    def lineage(name: str, seen=()) -> list[str]:   # the scene and scene classes it derives from
        node = classes.get(name)
        if node is None or name in seen:
            return []
        out = [name]
        for b in node.bases:
            if isinstance(b, ast.Name):
                out += lineage(b.id, seen + (name,))
        return out

    own, beats = {}, {}
    for name in names:
        chain = [classes[c] for c in lineage(name)]
        own[name] = _sha([ast.dump(c) for c in chain])
        mine = _spoken_beats(chain)
        beats[name] = None if (mine is None or common_beats is None) else list(dict.fromkeys(mine + common_beats))
    return ChapterSource(module, path, names, common, own, beats)


# ---------------------------------------------------------------------------------------
# Cache keys

def bundle_identity(bundle) -> dict:
    """What a rendered frame depends on in the bundle: its cache key and its tensors' checksum."""
    meta = bundle.meta
    return {"key": meta.get("cache_key"), "tensors": meta.get("tensors_sha256"), "schema": meta.get("schema_version")}


def tool_versions() -> dict:
    def v(pkg):
        try:
            return importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            return None
    return {"manim": v("manim"), "manim-voiceover": v("manim-voiceover"), "python": list(sys.version_info[:2]),
            "pipeline": PIPELINE_VERSION}


def voice_line_keys(chapter: str, lines: dict[str, str], voice: str | None, service=None) -> dict[str, object]:
    """beat -> what the spoken line depends on: the speech service's own cache key when it
    has one (text, voice, settings, mastering, recorded clip), else the text and voice spec."""
    from voiceover import script
    if service is None and voice is not None:
        try:
            from voiceover import services
            service = services.make_service(voice)
        except Exception:   # no service layer (yet) or a voice that cannot be made: key on the spec
            service = None
    out = {}
    for beat, text in lines.items():
        if service is not None and hasattr(service, "cache_key") and hasattr(script, "line_id"):
            out[beat] = service.cache_key(" ".join(text.split()), script.line_id(chapter, beat))
        else:
            out[beat] = {"text": text, "voice": voice}
    return out


def scene_key(*, bundle_id: dict, quality: str, chapter: str, scene: str, src: ChapterSource,
              deps: dict[str, str], line_keys: dict[str, object], versions: dict,
              shared: list[str] | None = ()) -> str:
    beats = None if (src.beats[scene] is None or shared is None) else [*src.beats[scene], *shared]
    spoken = line_keys if beats is None else {b: line_keys.get(b) for b in beats}
    return _sha({"bundle": bundle_id, "quality": quality, "chapter": chapter, "scene": scene,
                 "common": src.common, "own": src.own[scene], "deps": deps, "lines": spoken, "versions": versions})


# ---------------------------------------------------------------------------------------
# Jobs and results

@dataclass
class SceneJob:
    chapter: str
    scene: str
    index: int
    key: str
    stem: Path                  # <dir>/<chapter file>-<Scene>.<key16>; + .mp4 / .cues.json / .json

    @property
    def mp4(self) -> Path:
        return self.stem.with_name(self.stem.name + ".mp4")

    @property
    def cues(self) -> Path:
        return self.stem.with_name(self.stem.name + ".cues.json")

    @property
    def meta(self) -> Path:
        return self.stem.with_name(self.stem.name + ".json")

    @property
    def log(self) -> Path:
        return self.stem.with_name(self.stem.name + ".log")

    @property
    def label(self) -> str:
        return f"{self.chapter}/{self.scene}"

    def cached(self) -> bool:
        """A finished render of this key, with every narration clip its cues name still there
        (a cleared voice cache means the scene must speak its lines again)."""
        if not (self.meta.is_file() and self.mp4.is_file() and self.cues.is_file()):
            return False
        try:
            cues = json.loads(self.cues.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return all(Path(c["clip"]).is_file() for c in cues if isinstance(c, dict) and c.get("clip"))


@dataclass
class SceneResult:
    job: SceneJob
    cached: bool
    wall: float                 # seconds this run spent rendering it (0 when cached)
    cpu: float                  # CPU seconds (user + system) of its process (0 when cached)
    seconds: float              # video length: frames / fps
    frames: int
    fps: float


@dataclass
class ChapterResult:
    chapter: str
    title: str
    final: Path
    scenes: list[SceneResult]
    joined: bool                # False: the joined MP4 from an earlier run was still right
    join_wall: float = 0.0
    report: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.scenes)


def destination(out: Path, bundle, quality: str) -> Path:
    from data.bundle import slug
    return Path(out) / slug(bundle.prompt) / quality


def chapter_file(chapter: str, title: str) -> str:
    from data.bundle import slug
    return f"ch{chapter}-{slug(title)}"


def chapter_lines(chapter: str, bundle) -> dict[str, str]:
    """beat -> the line as spoken for this bundle (voiceover/scripts/chNN.py)."""
    from voiceover import script
    return script.chapter_lines(chapter, bundle, bundle.ledger())


def plan(chapters: list[str], bundle, quality: str, out: Path, voice: str | None = None, voice_service=None,
         titles: dict[str, str] | None = None, modules: dict[str, str] | None = None, root: Path = ROOT,
         lines_of: Callable[[str, object], dict[str, str]] = chapter_lines) -> dict[str, list[SceneJob]]:
    """The scene jobs of each chapter, with their cache keys (nothing rendered).

    titles / modules: chapter -> title / chapter module (default: scenes.registry); root: the
    project folder the modules are read from; lines_of(chapter, bundle): its narration lines."""
    if titles is None or modules is None:
        from scenes import registry
        titles = titles or registry.chapters()
        modules = modules or {c: registry.CHAPTER_MODULES[c][0] for c in chapters}
    work = destination(out, bundle, quality) / ".scenes"
    bundle_id, versions = bundle_identity(bundle), tool_versions()
    jobs: dict[str, list[SceneJob]] = {}
    for chapter in chapters:
        src = chapter_source(modules[chapter], root)
        start = [src.module, *ALWAYS]
        if module_path(f"voiceover.scripts.ch{chapter}", root):
            start.append(f"voiceover.scripts.ch{chapter}")
        dep_paths = dependencies(start, root)
        deps = {name: code_fingerprint(p) for name, p in sorted(dep_paths.items()) if name != src.module}
        shared = shared_beats({n: p for n, p in dep_paths.items() if n != src.module})
        lines = lines_of(chapter, bundle)
        line_keys = voice_line_keys(chapter, lines, voice, voice_service)
        name = chapter_file(chapter, titles[chapter])
        jobs[chapter] = [
            SceneJob(chapter, scene, i, key := scene_key(bundle_id=bundle_id, quality=quality, chapter=chapter,
                                                         scene=scene, src=src, deps=deps, line_keys=line_keys,
                                                         versions=versions, shared=shared),
                     work / f"{name}-{scene}.{key[:16]}")
            for i, scene in enumerate(src.scenes)]
    return jobs


# ---------------------------------------------------------------------------------------
# Media facts

def video_facts(path: Path) -> tuple[int, float]:
    """(frames, fps) of the first video stream, counted from its packets (exact, no decode)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                          "stream=nb_read_packets,r_frame_rate", "-of", "json", str(path)],
                         capture_output=True, text=True, check=True).stdout
    stream = json.loads(out)["streams"][0]
    return int(stream["nb_read_packets"]), float(Fraction(stream["r_frame_rate"]))


def stream_seconds(path: Path, kind: str = "v") -> float | None:
    """Duration of the first video ('v') or audio ('a') stream as ffprobe reports it."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", f"{kind}:0", "-show_entries",
                          "stream=duration", "-of", "csv=p=0", str(path)], capture_output=True, text=True,
                         check=True).stdout.strip()
    return float(out) if out and out != "N/A" else None


# ---------------------------------------------------------------------------------------
# Running scene processes

def _atomic_json(path: Path, data):
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


class _Runner:
    """Runs scene jobs in child processes, `jobs` at a time; remembers them to stop them."""

    def __init__(self, bundle_path: Path, quality: str, voice: str | None, env: dict | None,
                 command: Callable[[SceneJob, Path], list[str]] | None = None):
        self.bundle_path, self.quality, self.command = bundle_path, quality, command
        self.env = dict(os.environ if env is None else env)
        if voice is not None:
            self.env["ONEPASS_VOICE"] = voice
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.procs: set[subprocess.Popen] = set()
        self.lock = threading.Lock()
        self.stopping = False

    def run(self, job: SceneJob) -> SceneResult:
        if self.stopping:
            raise PipelineError("stopped")
        job.mp4.parent.mkdir(parents=True, exist_ok=True)
        cues_tmp = job.cues.with_name(job.cues.name + ".part")
        cmd = self.command(job, cues_tmp) if self.command else [
            sys.executable, "-m", "scenes.render_job", "--bundle", str(self.bundle_path), "--chapter", job.chapter,
            "--scene", job.scene, "--quality", self.quality, "--out", str(job.mp4), "--cues", str(cues_tmp)]
        t0 = time.perf_counter()
        with open(job.log, "w", encoding="utf-8") as log:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
            with self.lock:
                self.procs.add(proc)
            try:
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
            finally:
                with self.lock:
                    self.procs.discard(proc)
        wall = time.perf_counter() - t0
        cpu = usage.ru_utime + usage.ru_stime
        if proc.returncode != 0 or not job.mp4.is_file() or not cues_tmp.is_file():
            job.mp4.unlink(missing_ok=True)
            cues_tmp.unlink(missing_ok=True)
            text = job.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            tail = "\n".join(text[-15:])
            raise PipelineError(f"scene {job.scene} of chapter {job.chapter} failed to render "
                                f"(exit {proc.returncode}; log: {job.log}):\n{tail}")
        os.replace(cues_tmp, job.cues)
        try:
            frames, fps = video_facts(job.mp4)
        except (subprocess.CalledProcessError, KeyError, IndexError, ValueError) as exc:
            job.mp4.unlink(missing_ok=True)
            raise PipelineError(f"scene {job.scene} of chapter {job.chapter} wrote an unreadable video "
                                f"({exc}); log: {job.log}") from None
        _atomic_json(job.meta, {"key": job.key, "chapter": job.chapter, "scene": job.scene, "quality": self.quality,
                                "frames": frames, "fps": fps, "seconds": frames / fps, "render_wall": wall,
                                "render_cpu": cpu})
        job.log.unlink(missing_ok=True)
        return SceneResult(job, False, wall, cpu, frames / fps, frames, fps)

    def stop(self):
        self.stopping = True
        with self.lock:
            for p in list(self.procs):
                if p.poll() is None:
                    p.terminate()


def cached_result(job: SceneJob) -> SceneResult:
    meta = json.loads(job.meta.read_text(encoding="utf-8"))
    return SceneResult(job, True, 0.0, 0.0, meta["seconds"], meta["frames"], meta["fps"])


def _prune(job: SceneJob, keep: int = KEEP_VARIANTS):
    """Keep the current and the newest few other cached renders of a scene; delete the rest."""
    prefix = job.stem.name.rsplit(".", 1)[0] + "."
    stems = [p.with_suffix("") for p in job.stem.parent.glob(prefix + "*.json")
             if p.name.count(".") == 2 and p.with_suffix("") != job.stem]        # <name>.<key16>.json
    stems.sort(key=lambda s: s.with_name(s.name + ".json").stat().st_mtime, reverse=True)
    for stem in stems[max(0, keep - 1):]:
        for suffix in (".mp4", ".cues.json", ".json", ".log"):
            stem.with_name(stem.name + suffix).unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------
# Joining

def join_parts(parts: list[Path], cue_lists: list[list[dict]], final: Path, voiced: bool,
               durations: list[float] | None = None) -> dict:
    """Scene MP4s -> `final` (replaced only when complete): the picture joined by stream copy,
    each part exactly frames/fps long; with narration, the voice track rebuilt once for the
    whole chapter, exactly as long as the picture."""
    from voiceover import mixdown
    return mixdown.join(parts, cue_lists, final, voiced, durations) or {}


def thumbnail(video: Path, png: Path, at: float):
    tmp = png.with_name(png.stem + ".part.png")
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-ss", f"{max(at, 0):.2f}", "-i", str(video),
                    "-frames:v", "1", str(tmp)], check=True)
    os.replace(tmp, png)


def join_chapter(chapter: str, title: str, results: list[SceneResult], dest: Path, voiced: bool,
                 force: bool = False, burn_captions: bool = False) -> ChapterResult:
    """Join a chapter's scenes, write captions (burnt in too if asked) and a thumbnail; skipped
    when the joined files were made from exactly these scene renders."""
    from voiceover import captions
    final = dest / f"{chapter_file(chapter, title)}.mp4"
    stamp_path = dest / ".scenes" / f"{final.stem}.join.json"
    keys = [r.job.key for r in results]
    outputs = [final, final.with_suffix(".srt"), final.with_suffix(".vtt"), final.with_suffix(".png")]
    try:
        stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamp = {}
    if (not force and stamp.get("keys") == keys and stamp.get("voiced") == voiced
            and stamp.get("burnt", False) == burn_captions and all(p.exists() for p in outputs)
            and stamp.get("size") == final.stat().st_size):
        return ChapterResult(chapter, title, final, results, joined=False, report=stamp.get("report", {}))
    t0 = time.perf_counter()
    parts = [r.job.mp4 for r in results]
    cue_lists = [json.loads(r.job.cues.read_text(encoding="utf-8")) for r in results]
    durations = [r.seconds for r in results]
    report = join_parts(parts, cue_lists, final, voiced, durations)
    cues = captions.join_cues(cue_lists, durations)
    captions.write_srt(cues, final.with_suffix(".srt"))
    captions.write_vtt(cues, final.with_suffix(".vtt"))
    if burn_captions:
        from voiceover import mixdown
        mixdown.burn_captions(final, final.with_suffix(".srt"))
    total = sum(durations)
    thumbnail(final, final.with_suffix(".png"), at=min(total * 0.4, total - 0.1))
    frames, fps = video_facts(final)
    report = {k: v for k, v in dict(report).items() if isinstance(v, (int, float, str, list, dict, type(None)))}
    report.update({"frames": frames, "parts_frames": sum(r.frames for r in results), "seconds": frames / fps})
    if frames != report["parts_frames"]:
        raise PipelineError(f"joined chapter {chapter} has {frames} frames but its scenes have "
                            f"{report['parts_frames']}: {final}")
    _atomic_json(stamp_path, {"keys": keys, "voiced": voiced, "burnt": burn_captions, "size": final.stat().st_size,
                              "report": report})
    return ChapterResult(chapter, title, final, results, joined=True, join_wall=time.perf_counter() - t0,
                         report=report)


# ---------------------------------------------------------------------------------------
# The whole thing

def render(chapters: list[str], bundle, quality: str = "low", out: Path = ROOT / "out", jobs: int | None = None,
           voice: str | None = None, voice_service=None, voiced: bool | None = None, force: bool = False,
           burn_captions: bool = False, progress=None, on_scene: Callable[[SceneResult], None] | None = None,
           env: dict | None = None, titles: dict[str, str] | None = None, modules: dict[str, str] | None = None,
           root: Path = ROOT, lines_of: Callable[[str, object], dict[str, str]] = chapter_lines,
           command: Callable[[SceneJob, Path], list[str]] | None = None) -> list[ChapterResult]:
    """Render `chapters` from `bundle`: scenes in parallel (cached), each chapter joined when its
    scenes are done.

    voice: the voice spec the scene processes narrate with ($ONEPASS_VOICE); voice_service: the
    speech service made from it, if the caller has one (its per-line cache keys go into the scene
    keys); voiced: whether the chapter gets a narration track (default: voice is not silent);
    env: the scene processes' environment (default: this one); progress: a rich Progress;
    on_scene: called with each scene's result as it is known. titles, modules, root, lines_of:
    see plan(); command(job, cues_path): the argv that renders a job (default: scenes.render_job).
    Raises PipelineError."""
    if titles is None:
        from scenes import registry
        titles = registry.chapters()
    jobs = jobs or default_jobs()
    dest = destination(out, bundle, quality)
    plans = plan(chapters, bundle, quality, out, voice=voice, voice_service=voice_service, titles=titles,
                 modules=modules, root=root, lines_of=lines_of)
    work = dest / ".scenes"
    work.mkdir(parents=True, exist_ok=True)
    timings_path = work / "timings.json"
    try:
        timings = json.loads(timings_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        timings = {}
    if voiced is None:
        voiced = not getattr(voice_service, "silent", voice in (None, "none", "silent"))
    tasks = {c: progress.add_task(f"chapter {c}: {titles[c]}", total=len(plans[c])) for c in chapters} \
        if progress is not None else {}

    results: dict[str, list[SceneResult | None]] = {c: [None] * len(plans[c]) for c in chapters}
    todo: list[SceneJob] = []
    for c in chapters:
        for job in plans[c]:
            if job.cached() and not force:
                results[c][job.index] = r = cached_result(job)
                if progress is not None:
                    progress.advance(tasks[c])
                if on_scene:
                    on_scene(r)
            else:
                todo.append(job)
    # longest first (times from earlier runs; unknown scenes count as long), so the last
    # process to finish is a short one
    todo.sort(key=lambda j: -timings.get(j.label, float("inf")))

    runner = _Runner(bundle.path, quality, voice, env, command)
    chapter_results: dict[str, ChapterResult] = {}
    failure: PipelineError | None = None

    def finish_chapter(c: str):
        try:
            chapter_results[c] = join_chapter(c, titles[c], results[c], dest, voiced, force=force,
                                              burn_captions=burn_captions)
        except subprocess.CalledProcessError as exc:
            raise PipelineError(f"joining chapter {c} failed: {' '.join(map(str, exc.cmd))[:300]} "
                                f"exited with {exc.returncode}") from None
        for r in results[c]:
            _prune(r.job)

    for c in chapters:                       # chapters whose scenes were all cached
        if all(results[c]):
            finish_chapter(c)
    if todo:
        pool = cf.ThreadPoolExecutor(max_workers=min(jobs, len(todo)), thread_name_prefix="scene")
        futures = {pool.submit(runner.run, job): job for job in todo}
        try:
            for fut in cf.as_completed(futures):
                job = futures[fut]
                try:
                    r = fut.result()
                except PipelineError as exc:
                    if failure is None:
                        failure = exc
                        runner.stopping = True       # let running scenes finish; start no more
                        for f in futures:
                            f.cancel()
                    continue
                except cf.CancelledError:
                    continue
                results[job.chapter][job.index] = r
                timings[job.label] = round(r.wall, 2)
                if progress is not None:
                    progress.advance(tasks[job.chapter])
                if on_scene:
                    on_scene(r)
                if failure is None and all(results[job.chapter]):
                    finish_chapter(job.chapter)
        except BaseException:
            runner.stop()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            _atomic_json(timings_path, timings)
    if failure is not None:
        raise failure
    return [chapter_results[c] for c in chapters]


# ---------------------------------------------------------------------------------------
# The film: every chapter in one file, with chapter markers

FILM_NAME = "onepass-film"


def film_metadata(titles: list[str], durations: list[float]) -> str:
    """An ffmetadata document with one chapter marker per chapter (millisecond timebase)."""
    lines, start = [";FFMETADATA1", "title=One forward pass of GPT-2 small"], 0.0
    for title, length in zip(titles, durations):
        end = start + length
        safe = "".join("\\" + ch if ch in "=;#\\\n" else ch for ch in title)   # ffmetadata escaping
        lines += ["[CHAPTER]", "TIMEBASE=1/1000", f"START={round(start * 1000)}", f"END={round(end * 1000)}",
                  f"title={safe}"]
        start = end
    return "\n".join(lines) + "\n"


def join_film(results: list[ChapterResult], dest: Path) -> Path:
    """Chapter MP4s -> one film MP4 with chapter markers, plus its captions.

    The picture is stream-copied; the audio (when there is any) is re-encoded once across the
    joins so no AAC priming gap accumulates. Replaced only when complete."""
    from voiceover import captions, mixdown
    final = dest / f"{FILM_NAME}.mp4"
    parts = [r.final for r in results]
    durations = [mixdown.video_seconds(p) for p in parts]
    has_audio = all(stream_seconds(p, "a") is not None for p in parts)
    part = final.with_name(final.stem + ".part.mp4")
    with tempfile.TemporaryDirectory(prefix="onepass-film-", dir=dest) as tmp:
        listing, meta = Path(tmp) / "parts.txt", Path(tmp) / "chapters.txt"
        listing.write_text("ffconcat version 1.0\n" + "".join(
            f"file '{p.resolve()}'\nduration {d:.6f}\n" for p, d in zip(parts, durations)), encoding="utf-8")
        meta.write_text(film_metadata([f"{r.chapter} · {r.title}" for r in results], durations), encoding="utf-8")
        audio_args = ["-map", "0:a:0", "-c:a", "aac", "-b:a", mixdown.AAC_BITRATE, "-ar", "48000"] if has_audio else []
        try:
            subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "concat", "-safe", "0", "-i", str(listing),
                            "-i", str(meta), "-map", "0:v:0", "-c:v", "copy", *audio_args, "-map_metadata", "1",
                            "-map_chapters", "1", "-movflags", "+faststart", str(part)], check=True)
            os.replace(part, final)
        finally:
            part.unlink(missing_ok=True)
    cues, offset = [], 0.0
    for p, length in zip(parts, durations):      # each chapter's captions, shifted into the film
        cues += [dict(c, start=c["start"] + offset, end=c["end"] + offset) for c in captions.read_srt(p.with_suffix(".srt"))]
        offset += length
    captions.write_srt(cues, final.with_suffix(".srt"))
    captions.write_vtt(cues, final.with_suffix(".vtt"))
    return final
