"""What the tests share (one module; tests never import each other or conftest).

* Scenes without frames: `build_scene(bundle, chapter, scene, draw=False)` (a manim dry run).
* The picture follows the words: `holds`, `assert_picture_follows_words` (from the timeline
  ChapterScene records of every play; the rendered check is bench/review.py).
* Frames: `frame_checks` (text off-frame, in the caption band or too small, at every beat's end),
  `content_span`, `MIN_CONTENT_SHARE`, `KNOWN_NARROW` (the beats still narrow: may only shrink).
* The command line in this process: `run_main(*argv)`, `one_clear_line(err)`.
* Stand-in media (ffmpeg's test sources): `stand_in_clip` (an H.264 MP4, a tone or silence beside it),
  `stand_in_tone` (a WAV).
* The film build on a throwaway project with a stand-in renderer: `Project`, `StandInVoice`.
"""
from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.film.make import build  # noqa: E402
from onepass.scenes import style as S  # noqa: E402
from onepass.engine.text import light, string_of  # noqa: E402
from onepass.scenes.text import LEGIBLE  # noqa: E402
from onepass.words.catalog import is_rtl  # noqa: E402


# ---------------------------------------------------------------------------------------
# Scenes without frames

_MEDIA: list[str] = []


def _test_media_dir() -> str:
    """One manim media folder per test process: parallel test runs never share its text cache."""
    if not _MEDIA:
        import tempfile
        _MEDIA.append(tempfile.mkdtemp(prefix="onepass-test-media-"))
    return _MEDIA[0]


# Text outlines built so far in this test process: (class, text, args) -> a Text. A scene built
# again (another test, language or model size) gets copies: building one (Pango, then manim parsing
# its SVG) is about half of a dry run, a copy a few per cent of that. Keyed on every argument, so a
# copy is the outline the build would make; the recording below still sees every construction.
_OUTLINES: dict = {}


def _outline_key(self, text, args, kwargs):
    try:
        return (type(self), text, repr(args), repr(sorted(kwargs.items())))
    except TypeError:       # an argument that cannot be ordered: build it each time
        return None


def _copy_into(self, kept):
    """Make `self` a deep copy of `kept` (what Mobject.__deepcopy__ does with a new object), by
    engine/copies.py's deep_copy: copy.deepcopy's copy, faster for what a mobject is made of."""
    from onepass.engine.copies import deep_copy
    self.__dict__.update(deep_copy(kept.__dict__, {id(kept): self}))


def box(mob) -> tuple[float, float, float, float]:
    """(left, right, bottom, top) of `mob`: what get_left()[0], get_right()[0], get_bottom()[1] and
    get_top()[1] give, from one pass over its boundary points instead of four (checks at every beat
    of every scene measure thousands of shapes)."""
    points = mob.get_points_defining_boundary()
    if len(points) == 0:
        return 0.0, 0.0, 0.0, 0.0
    low, high = points.min(axis=0), points.max(axis=0)
    return float(low[0]), float(high[0]), float(low[1]), float(high[1])


def build_scene(bundle, chapter: str, scene: str, draw: bool = True, lang: str = "en", script=None):
    """Run a scene's construct() without writing frames (manim dry run); returns the scene.

    `lang` is the film's language (en, qps, ...), `script` a lecturer's own words (a PO file).

    draw=False also skips drawing the frames of each animation (each play jumps to its end
    state; scene time and the final mobjects are the same): several times faster.

    `scene.built_texts` lists the string of every Text the scene built (including the targets
    of transforms), `scene.shown_texts` those put on screen with add(), `scene.cues` the cues.
    """
    from unittest import mock

    from manim import Text

    from onepass.engine.dry_run import dry_run
    built: list[str] = []
    original_init = Text.__init__

    def recording_init(self, text, *args, **kwargs):
        built.append(text)
        key = _outline_key(self, text, args, kwargs)
        if key is not None and key in _OUTLINES:
            _copy_into(self, _OUTLINES[key])
            return
        original_init(self, text, *args, **kwargs)
        if key is not None:
            _OUTLINES[key] = light(self.copy())     # the film drops each glyph's SVG path anyway
    from onepass.scenes.base import SceneInputs
    from onepass.scenes.registry import scenes_of
    other = getattr(bundle, "compare", None)        # chapter 07's second model, where a test attached one
    inputs = SceneInputs(Path(bundle.path), lang=lang, script=script,   # no cues file; the silent voice
                         compare=Path(other.path) if other is not None else None)
    cls = {c.__name__: c for c in scenes_of(chapter)}[scene]
    with dry_run(_test_media_dir(), draw=draw), mock.patch.object(Text, "__init__", recording_init):
        instance = cls(inputs)
        instance.render()
    instance.built_texts = built
    return instance


# ---------------------------------------------------------------------------------------
# The picture follows the words

STILL = 4.0     # bench/review.py's rule: a picture held this long while the voice talks is a still


def altered_bundle(bundle, folder, tensors=None, meta=None):
    """A copy of `bundle` in `folder` whose tensors `tensors(dict)` and then whose meta `meta(dict)`
    edit in place, its tensors' checksum renewed: scenes load their bundle from its folder, so a
    picture built from the copy shows what a changed bundle shows."""
    import json
    import shutil
    from safetensors.numpy import load_file, save_file
    from onepass.data import bundle as bundle_io
    root = Path(folder) / bundle.path.name
    shutil.copytree(bundle.path, root)
    meta_path = root / bundle_io.META
    data = json.loads(meta_path.read_text(encoding="utf-8"))
    if tensors is not None:
        arrays = load_file(str(root / bundle_io.TENSORS))
        tensors(arrays)
        save_file(arrays, str(root / bundle_io.TENSORS))
        data["tensors_sha256"] = bundle_io.sha256_file(root / bundle_io.TENSORS)
    if meta is not None:
        meta(data)
    meta_path.write_text(json.dumps(data), encoding="utf-8")
    return bundle_io.load(root)


def holds(timeline) -> list[tuple[float, float]]:
    """Stretches in which the picture only held (consecutive waits), as (start, end)."""
    out, run = [], None
    for start, end, still in timeline:
        if still:
            run = (run[0], end) if run else (start, end)
        else:
            if run:
                out.append(run)
            run = None
    return out + ([run] if run else [])


def assert_picture_follows_words(scene, name: str):
    """Every spoken sentence and every marker starts a visible step, and no hold reaches STILL seconds."""
    steps = [start for start, _, still in scene.timeline if not still]
    for cue in scene.cues:
        for k, seg in enumerate(cue["segments"]):
            assert any(seg["start"] - 0.05 <= t < seg["end"] for t in steps), (
                f"{name}/{cue['beat']}: nothing on screen changes while sentence {k + 1} is spoken: "
                f"{seg['text']!r}")
    for cue in scene.cues:
        for mark, (at, end) in cue.get("marks", {}).items():
            assert any(at - 0.05 <= t < max(end, at + 0.2) for t in steps), (
                f"{name}/{cue['beat']}: nothing on screen changes at marker {mark!r} ({at:.2f} s)")
    longest = max((b - a for a, b in holds(scene.timeline)), default=0.0)
    assert longest < STILL, f"{name}: the picture holds {longest:.1f} s"
    # the beats run in the order the source names them: the scene cache, clips, slides and handouts
    # read that order from the source (film/plan/keys.py), so a beat written after the one it follows
    # would put its clip and slide in the wrong place
    from onepass.data.chapters import CHAPTERS
    from onepass.film.plan.keys import chapter_source
    ran = list(dict.fromkeys(cue["beat"] for cue in scene.cues if cue["beat"] != "title"))
    source = chapter_source(CHAPTERS[scene.chapter].module).beats
    cls = next(c.__name__ for c in type(scene).__mro__ if c.__name__ in source)
    written = [b for b in source[cls] if b in ran]
    assert ran == written, f"{name}: beats run in the order {ran}, but the source names them {written}"


# ---------------------------------------------------------------------------------------
# Frames

def content_span(scene) -> float:
    """How wide the beat's content is: the x-extent of everything drawn between the headline row
    and the footer line (the furniture — heading, mark, meter — a headline and a footer note left out)."""
    furniture = {id(m) for f in ("meter", "heading", "random_mark") if getattr(scene, f, None) is not None
                 for m in getattr(scene, f).get_family()}
    left, right = np.inf, -np.inf
    for mob in scene.mobjects:
        for sub in mob.get_family():
            if id(sub) in furniture or len(sub.points) == 0 or sub.submobjects:
                continue
            visible = sub.get_fill_opacity() > 0 or (sub.get_stroke_opacity() > 0 and sub.get_stroke_width() > 0)
            l, r, b, t = box(sub)
            if visible and S.FOOTER_Y + 0.2 < (b + t) / 2 < S.HEADLINE_Y - 0.25:
                left, right = min(left, l), max(right, r)
    return max(0.0, right - left)


# a content beat must span at least this much of the content area (S.CONTENT)
MIN_CONTENT_SHARE = 0.5


def frame_checks(bundle, chapter, name, monkeypatch, spans: dict | None = None, lang: str = "en",
                 built: list | None = None):
    """Build a scene (in language `lang`) and, at the end of every beat, collect text that is
    off-frame or too small, number labels that touch (crowded_numbers), and text any animation's
    target takes off the frame; `built`, when
    given, receives the scene.

    `spans`, when given, receives each beat's content width as a share of S.CONTENT_W
    ("NN Scene/beat" -> share; beats with nothing in the content area are left out)."""
    import onepass.scenes.base as base
    problems = []

    def checked(self, key):
        if spans is not None and key != "title":
            width = content_span(self)
            if width > 0:
                spans[f"{chapter} {name}/{key}"] = round(width / S.CONTENT_W, 2)
        numbers = []
        for mob in self.mobjects:
            for sub in shown_texts(mob):
                left, right, bottom, top = box(sub)
                shown = string_of(sub)
                where = f"{name}/{key}: {shown!r}"
                if NUMBER.match(shown.strip()):
                    numbers.append((shown.strip(), (left, right, bottom, top)))
                if off_frame(left, right, top):
                    problems.append(f"{where} leaves the frame")
                if bottom < S.CAPTION_TOP - 0.05 and f"{chapter} {name}/{key}" not in KNOWN_IN_CAPTION_BAND:
                    problems.append(f"{where} is in the caption band (bottom {bottom:.2f})")
                floor = min(KNOWN_SMALL.get(f"{chapter} {name}/{key}", LEGIBLE * S.SMALL),
                            KNOWN_SMALL_LANG.get(lang, {}).get(f"{chapter} {name}/{key}", 99.0))
                if sub.font_size < floor - 0.05:
                    problems.append(f"{where} is {sub.font_size:.1f} pt")
        problems.extend(crowded_pairs(numbers, f"{name}/{key}: "))     # numbers that read as one

    def begin_checked(self):
        """Text an animation carries off the frame on its way (an Indicate's swell at the peak of
        its there-and-back): its target, which the checks at the end of a beat never see."""
        begin(self)
        for animation in self.animations or []:
            target = getattr(animation, "target_copy", None)
            for sub in shown_texts(target) if target is not None else []:
                left, right, _, top = box(sub)
                if off_frame(left, right, top):
                    problems.append(f"{name}, play {self.renderer.num_plays}: {type(animation).__name__} takes "
                                    f"{string_of(sub)!r} off the frame")
    begin = base.ChapterScene.begin_animations
    monkeypatch.setattr(base.ChapterScene, "begin_animations", begin_checked)
    with after_every_beat(monkeypatch, checked):
        scene = build_scene(bundle, chapter, name, draw=False, lang=lang)
    if built is not None:
        built.append(scene)
    return problems


def shown_texts(mob):
    """The Text in mob's family that paints something."""
    from manim import Text
    return [s for s in mob.get_family() if isinstance(s, Text) and s.get_fill_opacity() != 0
            and len(s.get_all_points()) != 0]


def off_frame(left: float, right: float, top: float) -> bool:
    return left < -S.FRAME_W / 2 or right > S.FRAME_W / 2 or top > S.FRAME_H / 2


# Beats where English text already shrinks below LEGIBLE · S.SMALL on some test bundle (the check
# used to skip every Text, so these went unseen): "NN Scene/beat" -> the smallest size there, in pt.
# No language may shrink text further than English does; the list may only shrink.
KNOWN_SMALL: dict[str, float] = {
    "00 Compression/other": 16.9,
    "00 Merges/bytes": 8.5,
    "00 Merges/merges": 16.4,
    "00 Prompt/ids": 16.9,
    "01 Lookup/grid": 17.0,
    "01 Positions/add": 17.6,
    "02 Projections/intro": 17.1,
    "02 Projections/qkv": 15.3,
    "02 Scores/arcs": 12.6,
    "02 Scores/last_row": 12.6,
    "02 Scores/mask": 12.6,
    "02 Scores/scores": 12.6,
    "02 Scores/softmax": 12.6,
    "04 LastRow/last_row": 17.0,
    "05 MaskOff/changes": 12.7,
    "05 MaskOff/decoder": 12.7,
    "05 MaskOff/encoder": 12.7,
    "06 Cache/cache": 10.6,
    "06 Cache/redundant": 10.6,
    "06 Loop/append": 15.6,
    "06 Loop/loop": 15.6,
    "06 Square/decode": 14.1,
    "06 Square/prefill": 14.1,
}
# Beats where the pseudo-language's 40% longer words still shrink text a little below the floor
# (18.0 pt against 18.6): chapter 05's family columns and chapter 02's mixing row on a long prompt.
# A real translation is shorter than qps; these are the first places to check one. May only shrink.
KNOWN_SMALL_QPS: dict[str, float] = {
    "02 Mixing/mix": 17.9,
    "02 Projections/qkv": 15.1,      # the q/k/v strips drawn to scale (a5e8c33): their role words under them
    "05 Families/decoder_only": 17.9,
    "05 Families/encoder_decoder": 17.9,
    "05 Families/encoder_only": 17.9,
    "05 Families/verdict": 17.9,
}
# The same, per language: no translation may shrink text further than English except here (may only shrink)
KNOWN_SMALL_LANG: dict[str, dict[str, float]] = {"qps": KNOWN_SMALL_QPS, "es": {}, "ur": {}}
# Beats where English text already enters the caption band (unseen for the same reason); may only shrink.
KNOWN_IN_CAPTION_BAND = {"04 Softmax/softmax", "04 Softmax/tail", "04 Softmax/interest"}


# Beats whose content spans under half the content width today (default prompt, peaked numbers).
# This list may only shrink: a beat not on it that turns narrow fails the test below, and so
# does a beat on it that is no longer narrow.
KNOWN_NARROW = {"03 Climb/climb"}


# ---------------------------------------------------------------------------------------
# Numbers that never touch, marks on the right thing

# a label that is a number and nothing else: digits with a sign, decimal and group marks, a percent, or ∞
NUMBER = re.compile(r"^[+\-−–]?(?:\d[\d,.٫٬]*%?|∞)$")
# two numbers on one row closer than this share of the taller one's height read as one ("0.00−0.01")
MIN_NUMBER_GAP = 0.5


def number_labels(mobjects) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(string, box) of every shown Text among `mobjects` whose string is a number."""
    out = []
    for mob in mobjects:
        for sub in shown_texts(mob):
            s = string_of(sub).strip()
            if NUMBER.match(s):
                out.append((s, box(sub)))
    return out


def crowded_numbers(mobjects, where: str = "") -> list[str]:
    """Pairs of number labels among `mobjects` that read as one (crowded_pairs)."""
    return crowded_pairs(number_labels(mobjects), where)


def crowded_pairs(labels, where: str = "") -> list[str]:
    """Of `labels` ((string, box) as number_labels gives them), the pairs on the same row (their heights
    overlap by half the shorter one's) whose horizontal gap is under MIN_NUMBER_GAP of the taller one's
    height (overlapping ones included)."""
    labels = sorted(labels, key=lambda x: x[1][0])
    reach = MIN_NUMBER_GAP * max((t - b for _, (_, _, b, t) in labels), default=0.0)
    problems = []
    for i, (a, (l1, r1, b1, t1)) in enumerate(labels):
        for c, (l2, r2, b2, t2) in labels[i + 1:]:
            if l2 - r1 >= reach:            # sorted by left edge: this one and every later one are clear
                break
            h1, h2 = t1 - b1, t2 - b2
            if min(t1, t2) - max(b1, b2) < 0.5 * min(h1, h2):
                continue                    # not on the same row
            gap = max(l2 - r1, l1 - r2)
            if gap < MIN_NUMBER_GAP * max(h1, h2):
                problems.append(f"{where}{a!r} and {c!r} {'overlap' if gap < 0 else 'touch'} "
                                f"(gap {gap:.3f}, height {max(h1, h2):.3f})")
    return problems


def text_morphs(animations, where: str = "") -> list[str]:
    """The Transforms among `animations` (groups opened) that morph a Text into a Text of another string:
    manim moves glyph outlines point by point, so on the way the letters pass through shapes that are no
    letter at all. Between two strings the film fades (FadeTransform, or CrossFade where the mobject stays); a Transform may move,
    recolour or resize words that stay the same, and turn shapes into shapes."""
    from manim import FadeTransform, FadeTransformPieces, Text, Transform

    from onepass.engine.animation import CrossFade

    def strings(mob):
        return [string_of(t) for t in mob.get_family() if isinstance(t, Text) and len(t.get_all_points())]
    problems, todo = [], list(animations)
    while todo:
        a = todo.pop()
        todo.extend(getattr(a, "animations", None) or [])
        if not isinstance(a, Transform) or isinstance(a, (FadeTransform, FadeTransformPieces, CrossFade)):
            continue
        target = getattr(a, "target_copy", None) or a.target_mobject
        before, after = set(strings(a.mobject)), set(strings(target)) if target is not None else set()
        if before and after and before != after:
            problems.append(f"{where}{type(a).__name__} morphs {sorted(before)} into {sorted(after)}")
    return problems


@contextmanager
def recording_morphs(monkeypatch, found: list):
    """Every play of the scenes built inside adds its text_morphs to `found`."""
    import onepass.scenes.base as base
    begin = base.ChapterScene.begin_animations

    def checked(self):
        begin(self)
        frame, played = sys._getframe(), "?"        # the scene's line that played it
        while frame is not None and played == "?":
            name = frame.f_code.co_filename
            if "/scenes/" in name and not name.endswith(("base.py", "follow.py")):
                played = f"{Path(name).name}:{frame.f_lineno}"
            frame = frame.f_back
        found.extend(text_morphs(self.animations or [], f"{self.chapter} {type(self).__name__} ({played}): "))
    monkeypatch.setattr(base.ChapterScene, "begin_animations", checked)
    try:
        yield
    finally:
        monkeypatch.setattr(base.ChapterScene, "begin_animations", begin)


@contextmanager
def after_every_beat(monkeypatch, check):
    """Call check(scene, key) at the end of every beat of the scenes built inside."""
    import onepass.scenes.base as base
    original = base.ChapterScene.beat

    @contextmanager
    def checked(self, key):
        with original(self, key) as b:
            yield b
        check(self, key)
    monkeypatch.setattr(base.ChapterScene, "beat", checked)
    try:
        yield
    finally:
        monkeypatch.setattr(base.ChapterScene, "beat", original)


def tips_on_numbers(mobjects, where: str = "") -> list[str]:
    """Arrowheads among `mobjects` that land on a number label: the tip's outline comes nearer its box
    than the label's height (an arrow that points at a number stops clearly short of it)."""
    from manim import TipableVMobject
    labels = number_labels(mobjects)
    problems = []
    for mob in mobjects:
        for arrow in mob.get_family():
            if not isinstance(arrow, TipableVMobject) or not arrow.has_tip() or arrow.get_stroke_opacity() == 0:
                continue
            points = np.concatenate([t.points for t in arrow.get_tips() if len(t.points)] or [np.zeros((0, 3))])
            for text, (left, right, bottom, top) in labels:
                m = MIN_NUMBER_GAP * (top - bottom)      # as near as two numbers that read as one
                inside = ((points[:, 0] > left - m) & (points[:, 0] < right + m) & (points[:, 1] > bottom - m)
                          & (points[:, 1] < top + m))
                if inside.any():
                    problems.append(f"{where}an arrowhead lands on {text!r}")
    return problems


# an outline passes a text no nearer than this share of a line's height, plus half its stroke
MIN_FRAME_GAP = 0.1
# inside a glow made around it, a text's ink keeps this share of a line's height clear of the stroke, where a
# check asks for it (crowding_check(inside_gap=MIN_INSIDE_GAP)): a hairline's buff (GAP.xxs, 0.05) leaves the
# ink 0.035 from the stroke, 2 px at --quality low, and drew it against the letters (ch00's "la de GPT-2 small:
# …" in its purple outline, ch04's "an even split" and its value). Not yet the film-wide rule: chapter 04's
# glows are hairlines by design (ch04_vote.glow) and the Σ FLOPs meter's ring is one; 15 beats of chapter 04
# on SmolLM2 and the meter's ring in chapters 00/01 would need their gap first.
MIN_INSIDE_GAP = 0.15


def outlines(mobjects):
    """(polyline [n, 2], stroke width) of every outlined frame among `mobjects`: a glow (follow.glow's
    rounded box, glow_cells' polygon) or a panel: a shape with visible stroke that is not a grid's cell (a
    cell's stroke is the background's colour, drawn as the gap between cells). Each Bézier curve of the
    outline sampled at quarters, so a rounded corner is its arc, not its chord."""
    from manim import Polygram, RoundedRectangle
    t = np.linspace(0.0, 0.75, 4)[:, None]
    weights = np.hstack([(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3])      # [4 samples, 4 handles]
    out = []
    for mob in mobjects:
        for shape in mob.get_family():
            if not isinstance(shape, (Polygram, RoundedRectangle)) or not len(shape.points) \
                    or shape.get_stroke_opacity() == 0 or shape.get_stroke_width() == 0 \
                    or shape.get_stroke_color().to_hex().lower() == str(S.BACKGROUND).lower():
                continue
            for path in shape.get_subpaths():
                curves = path[: len(path) // 4 * 4, :2].reshape(-1, 4, 2)
                line = np.vstack([np.einsum("sh,chd->csd", weights, curves).reshape(-1, 2), path[-1:, :2]])
                out.append((line, shape.get_stroke_width()))
    return out


def _distance(line, left, right, bottom, top) -> float:
    """The least distance from the polyline `line` ([n, 2]) to the box (0 where it enters it)."""
    a, b = line[:-1], line[1:]
    lo, hi = np.array([left, bottom]), np.array([right, top])

    def to_box(p):                                         # points to the box
        return np.linalg.norm(np.maximum(lo - p, 0) + np.maximum(p - hi, 0), axis=-1)

    d = np.minimum(to_box(a), to_box(b))
    corners = np.array([[left, bottom], [left, top], [right, bottom], [right, top]])
    ab = b - a
    length2 = np.maximum((ab ** 2).sum(-1), 1e-18)
    for c in corners:                                      # the box's corners to the segments
        s = np.clip(((c - a) * ab).sum(-1) / length2, 0, 1)
        d = np.minimum(d, np.linalg.norm(a + s[:, None] * ab - c, axis=-1))
    # a segment that crosses the box from side to side passes near no corner and has no end in it
    for axis, (low, high) in enumerate(((left, right), (bottom, top))):
        other, (olow, ohigh) = 1 - axis, ((bottom, top), (left, right))[axis]
        for edge in (low, high):
            # where each segment meets the line through the box's edge: within the edge, it crosses
            da, db = a[:, axis] - edge, b[:, axis] - edge
            meets = (da * db <= 0) & (da != db)
            s = np.divide(da, da - db, out=np.zeros_like(da), where=meets)
            at = a[:, other] + s * ab[:, other]
            d = np.where(meets & (at >= olow) & (at <= ohigh), 0.0, d)
    return float(d.min()) if len(d) else np.inf


def texts_across_frames(mobjects, where: str = "", inside_gap: float = 0.0) -> list[str]:
    """Texts among `mobjects` that a frame's outline runs across or touches: a text is inside a frame or
    highlight, its ink clear of the outline's stroke, or outside it, clear of its edges by half the stroke and
    MIN_FRAME_GAP of a line's height (ch01's row labels ran into the left edge of the glow around their grid's
    cells; a glow's outline through a number). `inside_gap`: the share of a line's height a text inside a glow
    keeps clear of its stroke (0: only not touching it; MIN_INSIDE_GAP where a test asks for a visible gap)."""
    from bench.accessibility import _inside          # the even-odd test the contrast check uses
    frames = [(line, width, line.min(axis=0), line.max(axis=0)) for line, width in outlines(mobjects)]
    problems = []
    for mob in mobjects:
        for sub in shown_texts(mob):
            left, right, bottom, top = box(sub)
            text = string_of(sub)
            line_h = (top - bottom) / (1 + text.strip().count("\n"))       # one line's height
            centre = np.array([(left + right) / 2, (bottom + top) / 2])
            widest_gap = max(inside_gap, MIN_FRAME_GAP) * line_h
            for line, width, low, high in frames:
                # an outline lies inside its own bounding box: one that far from the text cannot touch it
                if np.hypot(max(low[0] - right, left - high[0], 0.0),
                            max(low[1] - top, bottom - high[1], 0.0)) >= 0.005 * width + widest_gap:
                    continue
                # inside a glow made around it, `inside_gap` (a hairline by default); outside, clear of its edge
                gap = (inside_gap if _inside(centre, line) else MIN_FRAME_GAP) * line_h
                if _distance(line, left, right, bottom, top) < 0.005 * width + gap:
                    problems.append(f"{where}a frame's edge runs across {text!r}")
                    break
    return problems


def crowded_tags(mobjects, where: str = "") -> list[str]:
    """A grid's column tags (NumberGrid.col_label_mobs: tokens over its columns) that read as one, as number
    labels do (crowded_pairs): SmolLM2's '<|endoftext|>' and '<|im_start|>' over chapter 04's scores, each
    fitted to its whole column, touched."""
    from onepass.scenes.widgets import NumberGrid
    problems = []
    for mob in mobjects:
        for grid in mob.get_family():
            if isinstance(grid, NumberGrid):
                tags = [(string_of(t), box(t)) for m in grid.col_label_mobs for t in shown_texts(m)]
                problems.extend(crowded_pairs(tags, where))
    return problems


def crowding_check(found: list, inside_gap: float = 0.0):
    """A check for after_every_beat: the crowded number labels and column tags of each beat, the
    arrowheads that land on a number and the frames whose edge runs across a text (`inside_gap`:
    texts_across_frames'), added to `found`."""
    def check(scene, key):
        where = f"{scene.chapter} {type(scene).__name__}/{key}: "
        found.extend(crowded_numbers(scene.mobjects, where) + crowded_tags(scene.mobjects, where)
                     + tips_on_numbers(scene.mobjects, where)
                     + texts_across_frames(scene.mobjects, where, inside_gap))
    return check


def covered_cells(shape, cells) -> set:
    """The keys of `cells` (key -> a cell) whose centre lies inside `shape`'s outline (a glow: a
    rounded rectangle or a polygon; every closed outline among its points, even-odd)."""
    from bench.accessibility import _inside          # the even-odd test the contrast check uses
    outlines = [subpath[:, :2] for sub in shape.get_family() if len(sub.points)
                for subpath in sub.get_subpaths()]
    return {key for key, cell in cells.items()
            if sum(_inside(cell.get_center()[:2], o) for o in outlines) % 2 == 1}


# ---------------------------------------------------------------------------------------
# The pseudo-language: every word of the film comes from the catalogs

WORDS = re.compile(r"[^\W\d_]{2,}")       # a run of two letters: words (q, k, ×, √64 are symbols)


def gpt2_strings(bundle, scene=None) -> set[str]:
    """Every string of GPT-2's own a scene may draw: the prompt and its tokens, the lens's guesses, the
    vote's candidates and picks, the vocabulary's first entries, each as the film shows a token, and
    what the scene itself lists as GPT-2's (`gpt2_texts`: merge pieces, a second prompt, pair words)."""
    from onepass.data import tokenizer
    ids = {*bundle.ids, *bundle.meta["top_ids"], *range(5), *(g["id"] for g in bundle.meta["generated"]),
           bundle.meta["sample"]["id"]}
    if "lens_ids" in bundle.tensors:
        ids.update(int(i) for i in np.asarray(bundle["lens_ids"]).ravel())
    if bundle.meta.get("watch"):
        ids.add(bundle.meta["watch"]["id"])
    return {bundle.prompt, *bundle.tokens, *(S.show_token(tokenizer.readable(i)) for i in ids),
            *(S.clip_token(i) for i in bundle.ids), *getattr(scene, "gpt2_texts", ())}


# Latin-script words a translated film may show: names and symbols, which no language translates
# (GPT-2's own strings are allowed besides). In Urdu any other Latin word escaped the catalog; in
# Spanish, an English word the Spanish catalog never uses did. May only shrink.
ALLOWED_ENGLISH: set[str] = {
    "GPT", "small", "FLOPs", "LayerNorm", "MLP", "BERT", "GELU", "BPE", "KV", "softmax", "exp", "top", "fp",   # the model, units
    "rms",                                                               # a symbol, as exp is (RMSNorm's root mean square)
    "encoder", "json", "vocab", "bpe",                                   # GPT-2's file names (encoder.json, vocab.bpe)
    "BART", "Claude", "LLaMA", "Whisper",                                # other models, by name
    "DistilGPT", "medium", "large", "XL",                                # the GPT-2 family's names (Latin in Urdu too)
    "Attention", "Is", "All", "You", "Need",                             # the paper's title
    "NVIDIA", "TFLOP", "TB",                                             # chapter 06's chip, by name, and its units
    "RMSNorm", "RoPE", "SwiGLU", "SiLU", "FLOP",                         # the modern decoder's parts, by name (glossary)
    "SmolLM", "Instruct", "Llama", "Qwen",                               # the Llama-style models' names
}
SYMBOL = re.compile(r"\b\w+_\w+\b")        # W_down, d_head, ln_f: symbols, not words


def vocabulary(lang: str) -> set[str]:
    """Every word (two letters or more, lower-cased) in a stored catalog's messages."""
    from onepass.words import catalog
    from onepass.words.markup import MARK
    own = catalog.english() if lang == catalog.SOURCE else catalog._catalog(lang)[0]   # no English beneath
    return {w.lower() for m in own.values() for form in m.forms
            for w in WORDS.findall(re.sub(r"\{\w+\}", " ", MARK.sub(" ", form)))}


def english_on_screen(scene, bundle, lang: str) -> list[str]:
    """Texts a scene built in `lang` that hold an English word its catalog does not use: English
    that escaped the catalog (GPT-2's own strings, names in ALLOWED_ENGLISH excepted). In a
    right-to-left language any Latin-script word its catalog lacks counts too."""
    own = gpt2_strings(bundle, scene)
    stripped = {o.strip() for o in own}
    english, theirs = vocabulary("en"), vocabulary(lang)
    out = set()
    for t in scene.built_texts:
        bare = re.sub(r" #[\d.,]+$", "", t)
        if bare in own or bare.strip() in stripped or (bare.endswith("…") and any(o.startswith(bare[:-1]) for o in own)):
            continue
        for w in WORDS.findall(SYMBOL.sub(" ", t)):
            low = w.lower()
            latin = all("a" <= c <= "z" for c in low)
            if w in ALLOWED_ENGLISH or any(w in o for o in own):
                continue
            if latin and is_rtl(lang):     # in a right-to-left film every Latin word is a name
                out.add(t)
            elif low in english and low not in theirs:
                out.add(t)
    return sorted(out)


def outside_the_catalog(scene, bundle) -> list[str]:
    """Texts a scene built with words that the pseudo-language did not write: each should be GPT-2's
    (a token as shown, cut with '…' or followed by its rank)."""
    from onepass.words.pseudo import OPEN
    own = gpt2_strings(bundle, scene)
    stripped = {o.strip() for o in own}

    def gpt2s(t: str) -> bool:
        t = re.sub(r" #[\d,]+$", "", t)
        return t in own or t.strip() in stripped or (t.endswith("…") and any(o.startswith(t[:-1]) for o in own))
    return sorted({t for t in scene.built_texts if WORDS.search(t) and OPEN not in t and not gpt2s(t)})


# ---------------------------------------------------------------------------------------
# The command line, in this process

def run_main(*argv) -> tuple[int, str, str]:
    """render.main(argv) in this process: (exit status, stdout, stderr)."""
    from onepass import cli as render        # the top layer: only the tests that run the command line load it
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = render.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def one_clear_line(err: str) -> str:
    """The error line an expected failure ends with: the last line of stderr, no traceback."""
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: "), err
    return last


# ---------------------------------------------------------------------------------------
# Stand-in media: the clips and tones tests feed to joins, burns and thumbnails

def stand_in_clip(path, *, seconds: float | None = None, frames: int | None = None, size: str = "160x90",
                  fps: int = 15, picture: str = "testsrc2", colour: str | None = None, noise: int | None = None,
                  tone: float | None = None, silent_audio: bool = False) -> Path:
    """An H.264 (yuv420p) MP4 at `path` made by ffmpeg's lavfi sources; returns `path`.

    The picture: `picture` is testsrc, testsrc2 or color (then `colour`, any ffmpeg colour: white,
    0x0E1117), `size` wide x high at `fps`, `seconds` long or `frames` frames; `noise` (a strength)
    adds grain that changes every frame (so damage lands in picture data). The sound, AAC at 48 kHz
    mono, needs `seconds`: `tone` (a sine's frequency in Hz) or `silent_audio` (anullsrc)."""
    if (seconds is None) == (frames is None):
        raise ValueError("a stand-in clip is `seconds` long or `frames` frames, one of the two")
    if (picture == "color") != (colour is not None):
        raise ValueError("`colour` goes with picture='color', and only with it")
    audio = tone is not None or silent_audio
    if audio and (seconds is None or (tone is not None and silent_audio)):
        raise ValueError("a sound track needs `seconds`, and is a tone or silence, not both")
    if picture == "color":
        source = f"color=c={colour}:s={size}:r={fps}"
    else:
        source = f"{picture}=size={size}:rate={fps}"
    if seconds is not None:
        source += f":d={seconds}"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", source]
    if tone is not None:
        cmd += ["-f", "lavfi", "-i", f"sine=frequency={tone}:duration={seconds}:sample_rate=48000"]
    elif silent_audio:
        cmd += ["-f", "lavfi", "-i", "anullsrc=r=48000:cl=mono", "-t", str(seconds)]
    if noise is not None:
        cmd += ["-vf", f"noise=alls={noise}:allf=t"]
    if frames is not None:
        cmd += ["-frames:v", str(frames)]
    cmd += ["-c:v", "libx264", "-pix_fmt", "yuv420p"]
    if audio:
        cmd += ["-c:a", "aac", "-shortest"]
    cmd.append(str(path))
    subprocess.run(cmd, check=True)
    return Path(path)


def stand_in_tone(path, seconds: float, freq: float = 440, sr: int = 48000) -> Path:
    """A mono WAV at `path` (16-bit PCM, `sr` Hz): `seconds` of a sine at `freq` Hz; returns `path`."""
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                    f"sine=frequency={freq}:duration={seconds}:sample_rate={sr}", "-ac", "1", str(path)], check=True)
    return Path(path)


# ---------------------------------------------------------------------------------------
# The film build on a throwaway project (a stand-in renders a few frames of a test picture)

FPS = 15
FRAMES = {"Alpha": 7, "Beta": 11, "Gamma": 13}

CHAPTER = '''\
"""A throwaway chapter."""
from scenes.shared import helper


def common_helper():
    return 1


class Base:
    pass


class Alpha(Base):
    def build(self):
        with self.beat("a"):
            pass


class Beta(Base):
    def build(self):
        with self.beat("b"):
            helper()


class Gamma(Base):
    def build(self):
        with self.beat("c"):
            pass


SCENES = [Alpha, Beta, Gamma]
'''

def packets_account(video: str, out: str) -> str:
    """Python lines for a stand-in scene process: what onepass.film.run.render_job says of its video (--packets,
    onepass.film.run.runner checks the MP4 against it), here the packets of the file named by the expression
    `video`, for the MP4 that the expression `out` names. A stand-in that damages its file afterwards
    is a render whose file is not what its encoder made."""
    return (f"import sys as _sys\n_sys.path.insert(0, {str(ROOT)!r})\n"
            "from onepass.voiceover.media import packet_hashes as _hashes, packets_digest as _digest\n"
            f"_h = _hashes({video})\n"
            f"json.dump({{'packets': len(_h), 'sha256': _digest(_h)}}, "
            f"open({out}[:-len('.mp4')] + '.packets.json', 'w'))\n")


FAKE_RENDER = '''\
"""Stand-in for onepass.film.run.render_job: N frames of a test picture, cues, a record of the call."""
import json, os, subprocess, sys, time
out, cues, frames, scene, record, barrier, n, fail = sys.argv[1:9]
with open(record, "a") as f:
    f.write(scene + "\\n")
if fail == scene:
    sys.exit("this scene is broken")
if barrier != "-":                     # wait until n scenes have started (proves they run at once)
    open(os.path.join(barrier, scene), "w").close()
    for _ in range(600):
        if len(os.listdir(barrier)) >= int(n):
            break
        time.sleep(0.05)
    else:
        sys.exit("the other scenes never started: not running in parallel")
tmp = out + ".part.mp4"
subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                f"testsrc=size=64x36:rate=15", "-frames:v", frames, "-c:v", "libx264", "-pix_fmt", "yuv420p",
                tmp], check=True)
os.replace(tmp, out)
json.dump([{"beat": scene, "start": 0.0, "end": 0.3, "text": "line of " + scene}], open(cues, "w"))
''' + packets_account("out", "out")


class StandInVoice:
    """A voiced speech service as the build sees it (voiceover/services.py): the spec a scene
    process gets, not silent, a key per line; the stand-in renderer speaks nothing itself."""
    silent = False

    def __init__(self, spec: str = "espeak"):
        self.spec = spec

    def cache_key(self, text: str, line_id: str | None, marks=(), lang: str = "en") -> dict:
        return {"text": text, "voice": self.spec}


class Project:
    """A throwaway project folder with one chapter ('99'), and the pipeline pointed at it."""

    def __init__(self, tmp: Path):
        self.root = tmp / "proj"
        for pkg in ("scenes", "voiceover", "voiceover/scripts"):
            (self.root / pkg).mkdir(parents=True, exist_ok=True)
            (self.root / pkg / "__init__.py").write_text("")
        self.chapter = self.root / "scenes" / "ch99_fake.py"
        self.chapter.write_text(CHAPTER)
        self.shared = self.root / "scenes" / "shared.py"
        self.shared.write_text("def helper():\n    return 2\n")
        self.script = self.root / "voiceover" / "scripts" / "ch99.py"
        self.script.write_text('LINES = ["a", "b", "c"]\n\n\ndef values(bundle, ledger):\n    return {}\n')
        self.fake = tmp / "fake_render.py"
        self.fake.write_text(FAKE_RENDER)
        self.record = tmp / "record.txt"
        self.record.write_text("")
        self.out = tmp / "out"
        self.lines = {"a": "First line.", "b": "Second line.", "c": "Third line."}
        self.bundle = SimpleNamespace(meta={"cache_key": "bundle-1", "tensors_sha256": "t-1", "schema_version": 1},
                                      prompt="a fake prompt", path=tmp / "bundle")
        self.barrier, self.barrier_n, self.fail = "-", 0, "-"

    def command(self, job, cues):
        return [sys.executable, str(self.fake), str(job.mp4), str(cues), str(FRAMES[job.scene]), job.scene,
                str(self.record), self.barrier, str(self.barrier_n), self.fail]

    def options(self, jobs: int = 2, **kw):
        return build.BuildOptions(quality="low", out=self.out, jobs=jobs, titles={"99": "Fake chapter"},
                                  modules={"99": "scenes.ch99_fake"}, root=self.root,
                                  lines_of=lambda chapter, bundle: dict(self.lines), command=self.command, **kw)

    def render(self, jobs: int = 2, **kw):
        before = len(self.rendered())
        results = build.render(["99"], self.bundle, self.options(jobs, **kw))
        self.last = sorted(self.rendered()[before:])
        return results[0]

    def rendered(self) -> list[str]:
        return self.record.read_text().split()


def check_urdu_chapter_keeps_audio_captions_and_picture_together(final, log: str):
    """`final`: a chapter rendered in Urdu with espeak-ng (tests/test_describe.py renders chapter 05 with
    --described and checks its standard cut with this: the suite's one real Urdu render); `log`: what the
    render printed. Sound, captions and picture together, every caption line right to left."""
    import json

    from onepass.voiceover import audio, captions, media
    assert "voice ur" in log and "Urdu" in log                     # the log says which voice spoke
    assert final.parent.parent.name == "ur"                          # a folder of its own per language
    fps = media.frame_rate(final)
    streams = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "json", str(final)],
        capture_output=True, text=True, check=True).stdout)["streams"]
    kinds = {s["codec_type"]: float(s["duration"]) for s in streams}
    assert abs(kinds["audio"] - kinds["video"]) <= 1 / fps
    vtt = final.with_suffix(".vtt").read_text(encoding="utf-8")
    assert "Language: ur" in vtt.split("\n\n")[0].splitlines()
    blocks = captions.read_srt(final.with_suffix(".srt"))
    assert [b["start"] for b in blocks] == sorted(b["start"] for b in blocks)
    assert all(b["start"] < b["end"] <= blocks[i + 1]["start"] + 1e-3 for i, b in enumerate(blocks[:-1]))
    for b in blocks:                                                   # every line reads right to left
        assert re.search("[\u0600-\u06ff]", b["text"]), b["text"]
        assert all(line.startswith(captions.RLM) for line in b["text"].split("\n")), b["text"]
    # speech begins where each sentence's caption begins (one frame at most), read from the MP4 itself;
    # a caption after a sentence's end (۔ ؟) or the first one opens the chapter where a sentence begins
    db = audio.frame_db(audio.decode(final))
    firsts = [b["start"] for i, b in enumerate(blocks) if i == 0 or blocks[i - 1]["text"].rstrip()[-1:] in "۔؟.?!"]
    for first in firsts:
        look = int(max(0.0, first - audio.SENTENCE_PAUSE * 0.75) * 100)     # inside the pause before it
        onset = (look + int(np.argmax(db[look:] > -45))) / 100
        assert abs(onset - first) <= 1 / fps, (onset, first)
    assert len(firsts) >= 10
