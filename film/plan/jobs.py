"""What a build is asked to do (BuildOptions), its scene jobs and their results, and the plan:
every scene of every requested chapter as a job with its cache key (film/plan/keys.py).

Files live next to the chapter MP4, in `<out>/<prompt slug>-<hash8>/<quality>/.scenes/`:
`<chapter file>-<Scene>.<key16>.mp4|.cues.json|.json` (the last written after a successful
render: the cache entry, recording the frame count, duration and sha256 of the other two,
checked before they are used), `<chapter file>.join.json`, `timings.json`.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from onepass.data import home
from onepass.data.bundle import sha256_file, slug
from onepass.data.chapters import CHAPTERS, compares, titles
from onepass.data.models import DEFAULT as DEFAULT_MODEL
from onepass.data.models import FAMILY
from onepass.film.plan import keys
from onepass.voiceover import script
from onepass.words.catalog import SOURCE, Words

KEEP_VARIANTS = 3        # cached renders kept per scene (older keys are deleted)


def chapter_lines(chapter: str, bundle, words: Words | None = None) -> dict:
    """beat -> the line as spoken for this bundle and language (onepass.words.markup.Filled)."""
    return script.chapter_lines(chapter, bundle, bundle.ledger(), words or Words.load())


@dataclass
class BuildOptions:
    """How to build: what render() and plan() are told besides the chapters and the bundle."""
    quality: str = "low"
    out: Path = field(default_factory=home.output_root)     # out/ under the current folder
    jobs: int | None = None          # scenes rendered at once (None: every core this process may use)
    voice: object = None             # the speech service (voiceover/services.py) the scenes narrate with:
                                     # its `spec` goes to every scene process, its per-line cache keys
                                     # into the scene keys, and unless it is `silent` the chapter gets a
                                     # narration track (None: silent)
    force: bool = False              # re-render every scene and re-join every chapter
    burn_captions: bool = False      # also draw the captions into the picture
    env: dict | None = None          # the scene processes' environment (None: this one's); process
                                     # settings only: every scene input is an argument (film/run/runner.py)
    progress: object = None          # a rich Progress, advanced scene by scene
    on_scene: Callable[[SceneResult], None] | None = None   # called with each scene's result as it is known
    log: Callable[[str], None] | None = None   # a line for the user: a damaged cache entry, waiting for another
                                               # run's lock, leftovers of a killed run removed (None: stderr)
    executor: object = None          # where scenes render (film/run/executors.py; None: a LocalExecutor of
                                     # `jobs` processes this build opens and closes)
    # where the chapters come from (defaults: data/chapters.py and this project); tests point
    # these at a throwaway project
    titles: dict[str, str] | None = None                   # chapter -> title
    modules: dict[str, str] | None = None                  # chapter -> chapter module
    root: Path = keys.ROOT                                  # the project folder modules are read from
    lines_of: Callable[..., dict] | None = None   # (chapter, bundle) -> its lines (None: the catalog's, in `words`)
    command: Callable[[SceneJob, Path], list[str]] | None = None       # (job, cues path) -> the argv that
                                                                        # renders it (None: onepass.film.run.render_job)
    words: Words | None = None       # the language and a lecturer's script (words/catalog.py; None: English)

    @property
    def language(self) -> Words:
        if self.words is None:
            self.words = Words.load()
        return self.words

    @property
    def lang(self) -> str:
        return self.words.lang if self.words is not None else SOURCE

    def chapter_titles(self) -> dict[str, str]:
        """chapter -> the title its files are named by (data/chapters.py: the same in every language)."""
        return self.titles if self.titles is not None else titles()

    def shown_titles(self) -> dict[str, str]:
        """chapter -> its title as the viewer reads it, in the film's language."""
        if self.titles is not None:
            return self.titles
        return {c: self.language.text(f"chapter-{c}") for c in titles()}

    def chapter_lines(self, chapter: str, bundle) -> dict:
        if self.lines_of is not None:
            return self.lines_of(chapter, bundle)
        return chapter_lines(chapter, bundle, self.language)

    def chapter_module(self, chapter: str) -> str:
        return self.modules[chapter] if self.modules is not None else CHAPTERS[chapter].module

    @property
    def voice_spec(self) -> str:
        """The --voice spec that makes the same voice in a scene process."""
        return self.voice.spec if self.voice is not None else "none"

    @property
    def is_voiced(self) -> bool:
        """The chapter gets a narration track."""
        return self.voice is not None and not self.voice.silent


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
    def packets(self) -> Path:
        """What the scene process says its encoder produced (packet count and digest): written
        beside the render in its staging folder, checked against the MP4, never cached."""
        return self.stem.with_name(self.stem.name + ".packets.json")

    @property
    def log(self) -> Path:
        return self.stem.with_name(self.stem.name + ".log")

    @property
    def label(self) -> str:
        return f"{self.chapter}/{self.scene}"

    def cached(self) -> bool:
        """A finished render of this key, intact (see `damage`)."""
        return self.damage() is None

    def damage(self) -> str | None:
        """None when the cache entry holds what it promises: its record (.json) names this key,
        the MP4 and cues have the size and sha256 it recorded, and every narration clip the cues
        name is still there (a cleared voice cache means the scene must speak its lines again).
        Otherwise why not: "" when there is no entry at all, else a reason for the log."""
        if not self.meta.is_file():
            return ""
        try:
            record = json.loads(self.meta.read_text(encoding="utf-8"))
            files = record["files"]
            for path, name in ((self.mp4, "mp4"), (self.cues, "cues")):
                if not path.is_file():
                    return f"its {path.suffix} file is missing"
                if path.stat().st_size != files[name]["bytes"] or sha256_file(path) != files[name]["sha256"]:
                    return f"its {path.name[len(self.stem.name):]} file differs from the render recorded " \
                           f"(size or sha256): damaged or overwritten"
            if record.get("key") != self.key or not record.get("frames"):
                return "its record does not match this scene"
            cues = json.loads(self.cues.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"its record or cues cannot be read ({type(exc).__name__})"
        if any(not Path(c["clip"]).is_file() for c in cues if isinstance(c, dict) and c.get("clip")):
            return "a narration clip it uses is gone"
        return None


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
    lang: str = SOURCE          # the language of its words (its captions' direction and tag)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.scenes)


def output_name(bundle) -> str:
    """The folder of a prompt's outputs: `<slug>-<hash8>`, readable and unique per prompt and
    weights (the slug alone is shared by 'The cat' and 'THE CAT!!', and cut at 40 letters); a
    family member other than GPT-2 small is named in it too (`<slug>-gpt2-xl-<hash8>`), so a
    folder says which model it explains (the weights alone already keep models apart)."""
    meta = bundle.meta
    weights = meta.get("weights") or {}
    identity = weights.get("sha256") or weights.get("identity") or meta.get("cache_key")
    digest = hashlib.sha256(json.dumps([bundle.prompt, identity], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    model = getattr(bundle, "model", None)
    named = f"-{model}" if model in FAMILY and model != DEFAULT_MODEL else ""
    return f"{slug(bundle.prompt)}{named}-{digest.hexdigest()[:8]}"


def destination(out: Path, bundle, quality: str, lang: str = SOURCE) -> Path:
    """Where a build's files go: `<out>/<prompt slug>-<hash8>/<quality>`, with the language as a
    folder of its own for any language but English (`.../es/low`), so languages never mix."""
    base = Path(out) / output_name(bundle)
    return (base if lang == SOURCE else base / lang) / quality


def chapter_file(chapter: str, title: str) -> str:
    return f"ch{chapter}-{slug(title, limit=80)}"    # room for a second model's name (file_titles)


def file_titles(titles: dict[str, str], bundle) -> dict[str, str]:
    """The titles a build names its chapters' files by: a chapter that sets a second model beside the
    bundle's (chapter 07) names that model too (`ch07-what-changed-since-gpt-2-beside-gpt2.mp4`), so
    two renders against different `--compare` models sit side by side instead of the second
    overwriting the first."""
    other = getattr(bundle, "compare", None)
    if other is None:
        return titles
    name = getattr(other, "model", None) or output_name(other).rsplit("-", 1)[-1]   # no family name: its hash
    return {c: f"{t} beside {name}" if compares(c) else t for c, t in titles.items()}


def plan(chapters: list[str], bundle, options: BuildOptions) -> dict[str, list[SceneJob]]:
    """The scene jobs of each chapter, with their cache keys (nothing rendered, nothing of the
    scenes imported: their sources are read as syntax trees)."""
    o = options
    titles = file_titles(o.chapter_titles(), bundle)
    work = destination(o.out, bundle, o.quality, o.lang) / ".scenes"
    bundle_id, versions = keys.bundle_identity(bundle), keys.tool_versions()
    other = getattr(bundle, "compare", None)          # chapter 07's second model: in its chapter's keys only
    pair_id = {**bundle_id, "compare": keys.bundle_identity(other)} if other is not None else bundle_id
    jobs: dict[str, list[SceneJob]] = {}
    for chapter in chapters:
        src = keys.chapter_source(o.chapter_module(chapter), o.root)
        dep_paths = keys.scene_modules(chapter, src.module, o.root)     # what its scene processes can import
        deps = {name: keys.code_fingerprint(p, name, o.root) for name, p in sorted(dep_paths.items())
                if name != src.module}
        shared = keys.shared_beats({n: p for n, p in dep_paths.items() if n != src.module}, o.root)
        line_keys = keys.voice_line_keys(chapter, o.chapter_lines(chapter, bundle), o.voice)
        name = chapter_file(chapter, titles[chapter])
        jobs[chapter] = [
            SceneJob(chapter, scene, i, key := keys.scene_key(bundle_id=pair_id if compares(chapter) else bundle_id,
                                                              quality=o.quality, chapter=chapter,
                                                              scene=scene, src=src, deps=deps, line_keys=line_keys,
                                                              versions=versions, shared=shared,
                                                              screen=keys.screen_words(src, scene, chapter, o.language,
                                                                                       dep_paths, o.root)),
                     work / f"{name}-{scene}.{key[:16]}")
            for i, scene in enumerate(src.scenes)]
    return jobs


def cached_result(job: SceneJob) -> SceneResult:
    meta = json.loads(job.meta.read_text(encoding="utf-8"))
    return SceneResult(job, True, 0.0, 0.0, meta["seconds"], meta["frames"], meta["fps"])


def prune(job: SceneJob, keep: int = KEEP_VARIANTS):
    """Keep the current and the newest few other cached renders of a scene; delete the rest."""
    prefix = job.stem.name.rsplit(".", 1)[0] + "."
    stems = [p.with_suffix("") for p in job.stem.parent.glob(prefix + "*.json")
             if p.name.count(".") == 2 and p.with_suffix("") != job.stem]        # <name>.<key16>.json
    stems.sort(key=lambda s: s.with_name(s.name + ".json").stat().st_mtime, reverse=True)
    for stem in stems[max(0, keep - 1):]:
        for suffix in (".mp4", ".cues.json", ".json", ".log"):
            stem.with_name(stem.name + suffix).unlink(missing_ok=True)
