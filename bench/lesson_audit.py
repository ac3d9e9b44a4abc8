#!/usr/bin/env python3
"""Table-only beats per chapter (issue 40: "count, per chapter, the beats whose picture is only a
table or a list of numbers, before and after").

    .venv/bin/python bench/lesson_audit.py                       # this checkout, every chapter
    .venv/bin/python bench/lesson_audit.py --chapters 02 06 -v   # and each beat's verdict
    .venv/bin/python bench/lesson_audit.py --before 820678a      # the table: before vs this checkout
    .venv/bin/python bench/lesson_audit.py --root /tmp/before-audit --json /tmp/before.json
    .venv/bin/python bench/lesson_audit.py --before-json /tmp/before.json      # reuse that column
    .venv/bin/python bench/lesson_audit.py --model smollm2-135m-instruct --weights auto   # a modern decoder

How a beat is read (no judgement per run: the same code and bundle give the same verdicts)
-----------------------------------------------------------------------------------------
Each scene of a chapter is dry-run (manim's dry_run, every play skipped to its end, nothing drawn;
as tests/helpers.py build_scene(draw=False)) on the default prompt's bundle (`--weights`, default
`random`: GPT-2 small's shapes). While it runs, ChapterScene.beat(key) names the current beat, and
every mobject the scene brings on or moves is recorded against it:

* `add(m)`: m;
* `play(a, ...)`: for each animation (groups and successions opened), its mobject and its target (a
  Transform leaves its mobject on screen, a ReplacementTransform its target); an indication (Indicate,
  the film's Swell, Circumscribe) records what it points at; an animation that removes its mobject
  (FadeOut, Uncreate, `remover=True` flashes) brings nothing on; `Wait`, the Σ FLOPs meter's count and
  the hold-breaking veils (`is_trace`) are left out;
* what is added between two beats (a scene's set-up) counts for the beat that follows;
* the furniture (the meter, the chapter heading, the random-weights mark) is never counted.

At the beat's end, what was recorded is read where it stands then, or, if the beat took it off
again (a picture shown and gone within the beat), where it stood at the end of the last play it was
on screen for (a copy kept then). A highlight (a glow, a Pointer) also brings in what it lights: the
largest things on screen inside its box. Each is sorted, widget first (a widget's own rectangles are
not pictures of their own), else shape by shape through its family:

* **table**: a `NumberGrid` with its values written (scenes/widgets.py), manim `Table`, `Matrix`,
  `DecimalNumber`, `Integer`, `Variable`, and any opaque filled rectangle with text inside it (a
  cell with its number written on it: a grid drawn without NumberGrid), and a filled cell without
  a number that stands in a column of such cells at the beat's end (a row a grid gains, chapter
  06's cache). A grid's colours repeat
  the numbers written on it, so a coloured grid of numbers is still a table;
* **text**: `Text`/`MarkupText`/`Paragraph`/`Tex`/`MathTex` (headlines, labels, numbers written
  out), `TokenChip` (a token's text in its chip), a straight `Line`/`DashedLine` (a rule, a
  separator), a rectangle or polygon round text filled with nothing or the panel/background
  colour (a frame), an empty outline (no fill: a slot, a frame, the dashes of a dashed box), a
  straight arrow (`Arrow`) that joins two things, and arrow tips;
* **mark**: emphasis on what is there: `SurroundingRectangle`, `BackgroundRectangle` (the film's
  `glow`, `Pointer`), `Underline`, `Cross`, `DivergingLegend` (a colour key), and a rectangle round
  text with a light tint (under half opaque);
* **picture**: everything else that paints: bars, curves and arcs (`CubicBezier`, `Arc`,
  `CurvedArrow`, `AttentionArcs`), dots, slanted lines, squares and rectangles without text inside
  (bars, cells of a heat map, a table drawn as its shape), an `ImageMobject` (a colour strip), a
  `NumberGrid` with `show_values=False` (a heat map), and straight arrows that start where another
  starts (vectors drawn from one origin at their angles: chapter 01's rows, chapter 02's q and k).

A beat is **table-only** when it brings on or moves at least one table or text and no picture
(marks alone do not make a picture: a glow over a table's row is still a table beat), unless it is
a **diagram**: two or more boxes of words (frames with no grid inside) and an arrow joining things,
as chapter 05's towers (that counts as a picture; a grid, an arrow and more grids stays a table
beat). A beat that
leaves nothing of its own on screen (only waits, marks or removals) is **hold**, and the chapter's
title card is **title**; neither is counted. Otherwise it is **picture**. `-v` lists each beat with
its kinds and the classes that made it a picture, so each verdict can be checked against a frame
(one frame at the end of each beat, from a low-quality render's `.cues.json`: see docs/LESSON.md).

`--model` audits a member of another architecture (data/arch: `smollm2-135m-instruct`, `qwen3-0.6b`;
`--weights auto` for the real ones, `random` for its shapes): each beat whose line takes that
architecture's own wording (`chNN-<beat>.<variant>`, words/catalog.py Words.wording: rope, rmsnorm,
swiglu, gqa, ...) is a **modern beat**, its line id kept in the row (`line`), and the table adds
their count, per chapter, and which of them are table-only.

It runs on this checkout (package `onepass.*`) and on a checkout before the package move (flat
`scenes.*`, `data.*`: `--root`); `--before REV` makes a worktree of REV in a temporary folder and runs
itself there in a child process, then prints both columns.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DEFAULT_PROMPT = "The cat sat on the"


# -- the imports of either layout ----------------------------------------------------------------
def layout(root: Path) -> str:
    """The module prefix of the checkout at `root`: 'onepass.' after the package move, '' before."""
    return "onepass." if (root / "onepass" / "__init__.py").exists() else ""


def modules(root: Path):
    import importlib
    sys.path.insert(0, str(root))
    p = layout(root)
    mods = {name: importlib.import_module(p + name) for name in
            ("scenes.base", "scenes.registry", "scenes.style", "data.extract", "data.chapters")}
    return mods


# -- kinds ---------------------------------------------------------------------------------------
TABLE, TEXT, MARK, PICTURE = "table", "text", "mark", "picture"
CONNECTOR, WORD_BOX = "connector", "word box"     # parts of a diagram: arrows joining boxes of words
GRID_BOXES: list = []        # the boxes of the grids on screen at the beat's end (Recorder.verdict)
TEXT_CLASSES = {"Text", "MarkupText", "Paragraph", "Tex", "MathTex", "SingleStringMathTex", "Title", "BulletedList"}
TABLE_CLASSES = {"Table", "MathTable", "MobjectTable", "IntegerTable", "DecimalTable", "Matrix", "DecimalMatrix",
                 "IntegerMatrix", "MobjectMatrix", "DecimalNumber", "Integer", "Variable"}
MARK_CLASSES = {"SurroundingRectangle", "BackgroundRectangle", "Underline", "Cross", "DivergingLegend"}
INDICATIONS = {"Indicate", "Swell", "Circumscribe", "Flash", "Wiggle", "ShowPassingFlash", "ApplyWave",
               "FocusOn", "Indication"}
FRAME_CLASSES = {"Rectangle", "RoundedRectangle", "Polygon", "Square"}
RULE_CLASSES = {"Line", "DashedLine"}
STRAIGHT_ARROWS = {"Arrow", "DoubleArrow", "Vector"}      # manim's straight arrows (Line subclasses)


def class_names(obj) -> set[str]:
    return {c.__name__ for c in type(obj).__mro__}


def family_leaves(mob):
    return [m for m in mob.get_family() if not m.submobjects]


def paints(m) -> bool:
    """Whether a leaf puts any ink on the frame (points with a visible stroke or fill, or an image)."""
    if "AbstractImageMobject" in class_names(m):
        return True
    if not hasattr(m, "get_stroke_opacity") or len(getattr(m, "points", ())) == 0:
        return False
    stroke = m.get_stroke_opacity() > 0 and m.get_stroke_width() > 0
    return bool(stroke or m.get_fill_opacity() > 0)


def kinds_of(mob, texts_boxes: list, seen: set | None = None) -> Counter:
    """The kinds a mobject brings on: a Counter kind -> number of parts, and 'why' entries naming
    the classes that count as pictures (for -v)."""
    out: Counter = Counter()
    why: Counter = Counter()
    stack = [mob]
    seen = set() if seen is None else seen
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue                # recorded twice (a group and its part, a FadeIn's mobject and target)
        seen.add(id(m))
        names = class_names(m)
        name = type(m).__name__
        if "NumberGrid" in names:
            if getattr(m, "values_mobs", None):
                out[TABLE] += 1
            else:
                out[PICTURE] += 1
                why["NumberGrid(heat map)"] += 1
            continue
        if names & TABLE_CLASSES:
            out[TABLE] += 1
            continue
        if names & TEXT_CLASSES or "TokenChip" in names:
            out[TEXT] += 1
            continue
        if names & MARK_CLASSES:
            out[MARK] += 1
            if not names & {"DivergingLegend", "Underline", "Cross"}:
                MARK_BOXES.append(_box(m))
            continue
        if names & STRAIGHT_ARROWS and id(m) in VECTORS:
            out[PICTURE] += 1       # arrows from one point: vectors drawn at their angles
            why["Arrow(vector)"] += 1
            continue
        if names & STRAIGHT_ARROWS or "ArrowTip" in names:
            out[TEXT] += 1          # a straight arrow joining two things (or a tip): it draws no number
            if "ArrowTip" not in names:
                out[CONNECTOR] += 1
            continue
        if m.submobjects:
            stack.extend(m.submobjects)
            if not paints(m):
                continue            # a group; a shape with parts (a curved arrow's tip) is read below too
        elif not paints(m):
            continue
        if name in RULE_CLASSES and _straight(m):
            out[TEXT] += 1          # a rule or separator
            continue
        if name in FRAME_CLASSES and _surrounds_text(m, texts_boxes):
            if _plain_fill(m):
                out[TEXT] += 1      # a panel or frame round words
                if not _surrounds_text(m, GRID_BOXES):
                    out[WORD_BOX] += 1  # a box of words (no grid inside it): a block of a diagram
                continue
            if _tint(m):
                out[MARK] += 1      # a tinted box lighting the words it holds
                MARK_BOXES.append(_box(m))
                continue
            if name != "Polygon":
                out[TABLE] += 1     # an opaque cell with its number written on it: a table's cell
                continue
        if name in FRAME_CLASSES and m.get_fill_opacity() == 0:
            out[TEXT] += 1          # an empty outline: a slot waiting to be filled, a frame, a dash of one
            continue
        if name in ("Rectangle", "Square") and _grid_column(m):
            out[TABLE] += 1         # a cell (its number not written) in a column of a grid of numbers: a row added
            continue
        out[PICTURE] += 1
        why[name] += 1
    out.update({f"why:{k}": v for k, v in why.items()})
    return out


GRID_COLUMNS: set = set()     # (left, right) of the cells of the grids of numbers on screen


def _grid_column(m) -> bool:
    l, r = float(m.get_left()[0]), float(m.get_right()[0])
    return any(abs(l - cl) < 0.02 and abs(r - cr) < 0.02 for cl, cr in GRID_COLUMNS)


MARK_BOXES: list = []        # the boxes of the beat's highlights (Recorder.verdict reads what they light)


def _box(m) -> tuple:
    return (m.get_left()[0], m.get_right()[0], m.get_bottom()[1], m.get_top()[1])


def _inside(inner: tuple, outer: tuple, slack: float = 0.05) -> bool:
    return (outer[0] - slack <= inner[0] and inner[1] <= outer[1] + slack and outer[2] - slack <= inner[2]
            and inner[3] <= outer[3] + slack)


def _overlaps(a: tuple, b: tuple) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def lit_by(box: tuple, roots: list, skip: set) -> list:
    """The largest mobjects on screen inside a highlight's box (what a glow or a Pointer lights):
    the whole of a widget or group when it fits inside, else its parts that do."""
    found, stack = [], list(roots)
    while stack:
        m = stack.pop()
        if id(m) in skip or m.width == 0 and m.height == 0:
            continue
        b = _box(m)
        if _inside(b, box):
            found.append(m)
        elif _overlaps(b, box) and m.submobjects:
            stack.extend(m.submobjects)
    return found


VECTORS: set[int] = set()     # the beat's straight arrows that share their start with another (Recorder.verdict)


def vectors(mobs) -> set[int]:
    """Ids of straight arrows that start where another straight arrow of the same beat starts."""
    import numpy as np
    arrows = list({id(x): x for m in mobs for x in m.get_family() if class_names(x) & STRAIGHT_ARROWS}.values())
    starts = [np.round(np.asarray(a.get_start()[:2], dtype=float), 2) for a in arrows]
    out = set()
    for i, a in enumerate(arrows):
        if any(j != i and np.abs(starts[i] - starts[j]).max() < 0.02 for j in range(len(arrows))):
            out.add(id(a))
    return out


def _straight(m) -> bool:
    import numpy as np
    a, b = m.get_start(), m.get_end()
    d = np.abs(np.asarray(b) - np.asarray(a))
    return bool(min(d[0], d[1]) < 1e-3)


PLAIN_FILLS: set[str] = set()     # the film's panel and background colours (filled in by audit())


def _plain_fill(m) -> bool:
    """No fill, or the film's panel or background colour: a box that holds words, not a bar."""
    return m.get_fill_opacity() == 0 or m.get_fill_color().to_hex().upper() in PLAIN_FILLS


def _tint(m) -> bool:
    """A light tint (under half opaque): a box that lights what it holds, not a bar."""
    return m.get_fill_opacity() < 0.5


def _surrounds_text(m, texts_boxes) -> bool:
    l, r, b, t = m.get_left()[0], m.get_right()[0], m.get_bottom()[1], m.get_top()[1]
    return any(l - 1e-3 <= tl and tr <= r + 1e-3 and b - 1e-3 <= tb and tt <= t + 1e-3 for tl, tr, tb, tt in texts_boxes)


# -- recording -----------------------------------------------------------------------------------
class Recorder:
    def __init__(self, scene):
        self.scene = scene
        self.beats: list[dict] = []       # {"key", "mobs": [...], "indicated": n}
        self.pending: list = []
        self.current: dict | None = None

    def furniture(self) -> set[int]:
        ids = set()
        for name in ("meter", "heading", "random_mark"):
            m = getattr(self.scene, name, None)
            if m is not None:
                ids |= {id(x) for x in m.get_family()}
        return ids

    def record(self, mob):
        (self.current["mobs"] if self.current is not None else self.pending).append(mob)

    def animation(self, a):
        names = class_names(a)
        if getattr(a, "is_trace", False) or "Wait" in names or "CountTo" in names:
            return
        subs = getattr(a, "animations", None)
        if subs:
            for s in subs:
                self.animation(s)
            return
        if names & INDICATIONS:
            # an indication (Indicate, the film's Swell, Circumscribe, ...) points at its target: the target
            # is a mobject this beat animates, read like any other (a swelling bar is a picture)
            target = getattr(a, "mobject", None)
            if target is not None:
                self.record(target)
            return
        if getattr(a, "remover", False):
            return
        # a Transform leaves its mobject on screen looking like its target; a ReplacementTransform puts
        # the target there: both are recorded, and only what is on screen at the beat's end is read
        for mob in (getattr(a, "mobject", None), getattr(a, "target_mobject", None)):
            if mob is not None:
                self.record(mob)

    def start(self, key: str):
        self.current = {"key": key, "mobs": self.pending, "kinds": Counter(), "snaps": {}}
        self.pending = []

    def _screen(self):
        furniture = self.furniture()
        on_screen = [x for m in self.scene.mobjects for x in m.get_family()]
        boxes = [_box(t) for t in on_screen if class_names(t) & TEXT_CLASSES and t.width > 0 and id(t) not in furniture]
        grids = [_box(g) for g in on_screen if class_names(g) & (TABLE_CLASSES | {"NumberGrid"})]
        return furniture, on_screen, {id(x) for x in on_screen}, boxes, (grids, set())

    @staticmethod
    def columns(on_screen, boxes) -> set:
        """(left, right) of every cell on screen with its number written in it (an opaque rectangle round
        a text): the columns of the grids of numbers showing."""
        import numpy as np
        cells = [c for c in on_screen if type(c).__name__ in ("Rectangle", "Square") and not c.submobjects
                 and c.get_fill_opacity() >= 0.5]
        if not cells or not boxes:
            return set()
        cb = np.array([_box(c) for c in cells])
        tb = np.array(boxes)
        inside = ((cb[:, None, 0] - 1e-3 <= tb[None, :, 0]) & (tb[None, :, 1] <= cb[:, None, 1] + 1e-3)
                  & (cb[:, None, 2] - 1e-3 <= tb[None, :, 2]) & (tb[None, :, 3] <= cb[:, None, 3] + 1e-3)).any(axis=1)
        return {(float(l), float(r)) for (l, r, _, _), ok in zip(cb, inside) if ok}

    def checkpoint(self):
        """After each play of the beat: keep a copy of what the beat has brought on that is on screen now
        (and the words around it), so that a picture shown and taken off within the beat still counts."""
        b = self.current
        if b is None:
            return
        furniture, _, shown, boxes, grids = self._screen()
        for m in b["mobs"]:
            if id(m) in shown and not any(id(x) in furniture for x in m.get_family()):
                b["snaps"][id(m)] = (m.copy(), boxes, grids)

    def read(self, mobs: list, boxes: list, grids: tuple, seen: set) -> Counter:
        GRID_BOXES[:] = grids[0]
        GRID_COLUMNS.clear()
        GRID_COLUMNS.update(grids[1])
        VECTORS.clear()
        VECTORS.update(vectors(mobs))
        kinds: Counter = Counter()
        for m in mobs:
            kinds.update(kinds_of(m, boxes, seen))
        return kinds

    def end(self):
        """The beat's verdict: what it brought on, read where it stands at the beat's end, or for what
        it took off again, where it stood at the last play it was on screen for."""
        b = self.current
        furniture, on_screen, shown, boxes, grids = self._screen()
        grids = (grids[0], self.columns(on_screen, boxes))
        live = [m for m in b["mobs"] if id(m) in shown and not any(id(x) in furniture for x in m.get_family())]
        MARK_BOXES.clear()
        seen: set = set()
        kinds = self.read(list({id(m): m for m in live}.values()), boxes, grids, seen)
        marks = list(MARK_BOXES)
        live_ids = {id(m) for m in live}
        for key, (copy, old_boxes, old_grids) in b["snaps"].items():
            if key not in live_ids:
                kinds.update(self.read([copy], old_boxes, old_grids, seen))
        # a highlight points at what it lights: a glow over bars makes the bars this beat's picture
        own = {id(x) for m in live for x in m.get_family()}
        lit: Counter = Counter()
        for box in marks:
            for m in lit_by(box, self.scene.mobjects, furniture | own):
                lit.update(self.read([m], boxes, grids, seen))
        if lit[PICTURE]:
            kinds[PICTURE] += lit[PICTURE]
            kinds.update({f"why:lit {k[4:]}": v for k, v in lit.items() if k.startswith("why:")})
        b["kinds"] = kinds
        self.beats.append(self.verdict(b))
        self.current = None

    def verdict(self, b: dict) -> dict:
        kinds = b["kinds"]
        if b["key"] == "title":
            verdict = "title"          # the chapter's title card (ChapterScene.title_card)
        elif kinds[PICTURE]:
            verdict = "picture"
        elif kinds[WORD_BOX] >= 2 and kinds[CONNECTOR]:
            verdict = "picture"        # a diagram: boxes of words joined by arrows (no grid in the boxes)
            kinds["why:diagram"] += 1
        elif kinds[TABLE] or kinds[TEXT]:
            verdict = "table-only"
        else:
            verdict = "hold"
        return {"beat": b["key"], "verdict": verdict,
                "kinds": {k: kinds[k] for k in (TABLE, TEXT, MARK, PICTURE, CONNECTOR, WORD_BOX) if kinds[k]},
                "why": {k[4:]: v for k, v in sorted(kinds.items()) if k.startswith("why:")},
                "grid": bool(kinds[TABLE])}


def this_checkouts_dry_run():
    """engine/dry_run.py's dry_run() of this checkout, loaded from its file: the revision audited
    (--root, --before) may be older than it and have none."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("lesson_audit_dry_run", HERE / "engine" / "dry_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dry_run


def audit_chapter(mods, chapter: str, bundle) -> list[dict]:
    """[{scene, beat, verdict, kinds, why, line}] for every beat of `chapter`, in order (`line`: the
    id of the wording the beat speaks, `chNN-<beat>.<variant>` where the bundle's architecture has its
    own; absent in a checkout before variants)."""
    from unittest import mock

    from manim import Animation, Scene
    dry_run = this_checkouts_dry_run()
    base = mods["scenes.base"]
    ChapterScene = base.ChapterScene
    original_beat, original_add, original_play = ChapterScene.beat, Scene.add, Scene.play
    recorders: dict[int, Recorder] = {}

    def rec(scene) -> Recorder:
        return recorders.setdefault(id(scene), Recorder(scene))

    @contextlib.contextmanager
    def beat(self, key):
        r = rec(self)
        with original_beat(self, key) as b:
            r.start(key)
            try:
                yield b
            finally:
                r.end()

    def add(self, *mobjects):
        if isinstance(self, ChapterScene):
            for m in mobjects:
                rec(self).record(m)
        return original_add(self, *mobjects)

    def play(self, *args, **kwargs):
        if isinstance(self, ChapterScene):
            prepared = []
            for a in args:
                try:
                    a = a if isinstance(a, Animation) else a.build()    # mob.animate... as its animation
                except Exception:       # noqa: BLE001 - a mobject passed as itself
                    pass
                prepared.append(a)
                rec(self).animation(a)
            args = tuple(prepared)
            result = original_play(self, *args, **kwargs)
            rec(self).checkpoint()
            return result
        return original_play(self, *args, **kwargs)

    rows = []
    media = tempfile.mkdtemp(prefix="lesson-audit-media-")
    for cls in mods["scenes.registry"].scenes_of(chapter):
        with dry_run(media), mock.patch.object(ChapterScene, "beat", beat), \
                mock.patch.object(Scene, "add", add), mock.patch.object(Scene, "play", play):
            scene = cls(base.SceneInputs(Path(bundle.path)))
            scene.render()
        for v in rec(scene).beats:
            rows.append({"scene": cls.__name__, **v, **_line_of(mods, chapter, v["beat"], bundle)})
    return rows


def _line_of(mods, chapter: str, beat: str, bundle) -> dict:
    """{'line': the id of the wording beat `beat` speaks for this bundle}, or {} where the checkout
    has no architecture variants (before issue 49)."""
    shape = getattr(bundle, "shape", None)
    try:
        import importlib
        prefix = mods["scenes.base"].__name__[: -len("scenes.base")]      # the audited checkout's layout
        catalog = importlib.import_module(prefix + "words.catalog")
        words = catalog.Words.load("en")
        base = f"ch{chapter}-{beat}"
        return {"line": words.wording(base, False, shape.component_tags()) if shape is not None else base}
    except (ImportError, AttributeError, TypeError):
        return {}


def modern(rows) -> list[dict]:
    """The beats that speak an architecture's own wording (a line id with a variant)."""
    return [r for r in rows if "." in r.get("line", "") and r["verdict"] != "title"]


def audit(root: Path, chapters: list[str] | None, weights: str, prompt: str, model: str | None = None) -> dict:
    mods = modules(root)
    style = mods["scenes.style"]
    PLAIN_FILLS.update(c.to_hex().upper() for c in (style.PANEL, style.BACKGROUND))
    bundle_root = Path(tempfile.gettempdir()) / f"lesson-audit-bundles-{layout(root) or 'flat'}"
    extra = {"model": model} if model else {}         # a checkout before data/arch takes no model
    bundle = mods["data.extract"].extract(prompt, weights, root=bundle_root, log=lambda m: None, **extra)
    every = sorted(mods["data.chapters"].CHAPTERS)
    result = {"root": str(root), "commit": _commit(root), "weights": weights, "prompt": prompt, "chapters": {},
              **extra}
    for ch in chapters or every:
        result["chapters"][ch] = audit_chapter(mods, ch, bundle)
    return result


def _commit(root: Path) -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


# -- report --------------------------------------------------------------------------------------
def table_only(rows) -> list[str]:
    return [f"{r['beat']}" for r in rows if r["verdict"] == "table-only"]


def print_verdicts(result: dict):
    for ch, rows in result["chapters"].items():
        print(f"\nchapter {ch} ({result['commit']})")
        for r in rows:
            why = ", ".join(f"{k}×{v}" for k, v in r["why"].items())
            kinds = " ".join(f"{k}={v}" for k, v in r["kinds"].items())
            line = f"  [{r['line']}]" if r in modern(rows) else ""
            print(f"  {r['scene']:<26} {r['beat']:<22} {r['verdict']:<10} {kinds:<34} {why}{line}")


def print_table(before: dict | None, after: dict):
    chapters = sorted(after["chapters"])      # the chapters audited now (a --chapters subset too)
    head = "| chapter | beats (before → after) | table-only before | table-only after | table-only beats (after) |"
    print(f"\nbefore: {before['commit'] if before else '-'}   after: {after['commit']}   "
          f"weights {after['weights']}, prompt {after['prompt']!r}"
          + (f", model {after['model']}" if after.get("model") else "") + "\n")
    print(head)
    print("|---|---|---|---|---|")
    tb = ta = nb = na = 0
    for ch in chapters:
        a = [r for r in after["chapters"].get(ch, []) if r["verdict"] != "title"]     # title cards are not beats
        b = (before or {}).get("chapters", {}).get(ch)
        b = None if b is None else [r for r in b if r["verdict"] != "title"]
        beats = f"{len(b)} → {len(a)}" if b is not None else f"{len(a)}"
        nb += len(b or [])
        na += len(a)
        tb += len(table_only(b)) if b is not None else 0
        ta += len(table_only(a))
        print(f"| {ch} | {beats} | {len(table_only(b)) if b is not None else '-'} | {len(table_only(a))} | "
              f"{', '.join(table_only(a)) or '-'} |")
    print(f"| all | {nb} → {na} | {tb} | {ta} | |")
    if after.get("model"):
        print(f"\nmodern beats ({after['model']}: lines with its architecture's own wording)\n")
        print("| chapter | modern beats | their lines | table-only among them |")
        print("|---|---|---|---|")
        for ch in chapters:
            m = modern(after["chapters"].get(ch, []))
            lines = ", ".join(r["line"][5:] for r in m) or "-"
            print(f"| {ch} | {len(m)} | {lines} | {', '.join(r['beat'] for r in m if r['verdict'] == 'table-only') or '-'} |")
    if before:
        print("\ntable-only beats before:")
        for ch in chapters:
            b = before["chapters"].get(ch, [])
            print(f"  {ch}: {', '.join(table_only(b)) or '-'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=HERE, help="the checkout to audit (default: this one)")
    ap.add_argument("--chapters", nargs="*", help="chapters (default: all)")
    ap.add_argument("--weights", default="random", help="the bundle's weights (default random: GPT-2 small)")
    ap.add_argument("--prompt", default=DEFAULT_PROMPT)
    ap.add_argument("--model", help="a model of another architecture (smollm2-135m-instruct): its beats and "
                                    "the modern ones among them (default: GPT-2's, as --weights gives)")
    ap.add_argument("--before", metavar="REV", help="also audit REV (a worktree made and removed here)")
    ap.add_argument("--before-json", type=Path, metavar="FILE",
                    help="the 'before' column from an earlier run's --json (instead of --before REV)")
    ap.add_argument("--json", type=Path, help="write the result here")
    ap.add_argument("-v", "--verbose", action="store_true", help="every beat's verdict")
    args = ap.parse_args(argv)
    before = None
    if args.before:
        before = _audit_rev(args.before, args)
    elif args.before_json:
        saved = json.loads(args.before_json.read_text(encoding="utf-8"))
        before = saved["after"] if "after" in saved else saved
    after = audit(args.root.resolve(), args.chapters, args.weights, args.prompt, args.model)
    if args.json:
        args.json.write_text(json.dumps({"before": before, "after": after}, indent=1), encoding="utf-8")
    if args.verbose:
        if before:
            print_verdicts(before)
        print_verdicts(after)
    print_table(before, after)


def _audit_rev(rev: str, args) -> dict:
    """Audit commit `rev` in a worktree of its own, in a child process (its modules are not ours)."""
    folder = Path(tempfile.mkdtemp(prefix="lesson-audit-rev-"))
    tree = folder / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=HERE, check=True,
                   capture_output=True)
    try:
        out = folder / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--root", str(tree), "--weights", args.weights,
               "--prompt", args.prompt, "--json", str(out)] + (["--chapters", *args.chapters] if args.chapters else []) \
            + (["--model", args.model] if args.model else [])
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text(encoding="utf-8"))["after"]
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=HERE, capture_output=True)


if __name__ == "__main__":
    main()
