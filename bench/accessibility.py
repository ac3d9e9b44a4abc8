#!/usr/bin/env python3
"""Colour and motion checks (issue 43 item 8; WCAG 2.1 1.4.1, 1.4.3, 2.3.1):

    .venv/bin/python bench/accessibility.py palette                 # ΔE under colour-vision deficiency
    .venv/bin/python bench/accessibility.py flashes out/.../ch02-*.mp4 [more.mp4 ...]
    .venv/bin/python bench/accessibility.py contrast --chapter 02 [--bundle DIR]

* palette: each concept colour of scenes/style.py (TOKEN ... POSITIVE) simulated for protanopia,
  deuteranopia and tritanopia (Machado 2009, severity 1, through colour-science), and the smallest
  CIEDE2000 ΔE between two concept colours that one chapter uses (`chapter_groups`), per simulation;
  the diverging scale's two signs and the sequential scale's steps likewise.
* flashes: WCAG's general flash rule on a rendered MP4: relative luminance averaged over every
  341x256 area (of a 1024x768 screen, scaled to the video; windows overlap by half), a flash being
  a pair of opposing changes of at least 10% of the maximum where the darker side is below 0.80;
  the most flashes in any one second, over all areas. Three or fewer passes (2.3.1).
* contrast: text against what is behind it, measured on drawn frames: a scene's dry run draws the
  frame at the end of each play, and each visible Text's box is read from it: the background is
  the commonest colour of the ring of pixels just outside the box, the ink the box's pixel farthest
  from it in luminance (a glyph's core). The lowest ratio per chapter, with the text that has it.

colour-science is in pyproject's test extra; the flash and contrast checks need numpy and ffmpeg.
"""
from __future__ import annotations

import argparse
import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONCEPTS = ("TOKEN", "QUERY", "KEY", "VALUE", "ATTENTION", "MLP", "LOGIT", "RESIDUAL", "FLOPS",
            "WARNING", "NEGATIVE", "POSITIVE")
# the simulations: colour-science's names for Machado 2009's matrices; severity 1 is the -opia
DEFICIENCIES = {"protanopia": "Protanomaly", "deuteranopia": "Deuteranomaly", "tritanopia": "Tritanomaly"}
# the random-weights mark always says so in words (film:synthetic-mark): its colour carries nothing
# alone, so its pairs are reported but not held to the threshold
LABELLED = {"WARNING"}


# -- colour ------------------------------------------------------------------------------------
def srgb_to_linear(rgb):
    rgb = np.asarray(rgb, dtype=float)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def relative_luminance(rgb) -> np.ndarray:
    """WCAG 2.1's relative luminance of sRGB values in [0, 1] (last axis: R, G, B)."""
    return srgb_to_linear(rgb) @ np.array([0.2126, 0.7152, 0.0722])


def contrast_ratio(a, b) -> float:
    """WCAG contrast ratio (1 to 21) of two sRGB colours in [0, 1]."""
    la, lb = float(relative_luminance(a)), float(relative_luminance(b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def simulate(rgb, deficiency: str) -> np.ndarray:
    """sRGB colours (..., 3) in [0, 1] as seen with `deficiency` (a key of DEFICIENCIES or 'normal')."""
    import colour
    rgb = np.asarray(rgb, dtype=float)
    if deficiency == "normal":
        return rgb
    matrix = colour.matrix_cvd_Machado2009(DEFICIENCIES[deficiency], 1.0)
    linear = np.clip(srgb_to_linear(rgb) @ matrix.T, 0.0, 1.0)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def lab(rgb) -> np.ndarray:
    import colour
    return colour.XYZ_to_Lab(colour.sRGB_to_XYZ(np.asarray(rgb, dtype=float)))


def delta_e(a, b) -> np.ndarray:
    """CIEDE2000 between sRGB colours (broadcast over leading axes)."""
    import colour
    return colour.delta_E(lab(a), lab(b), method="CIE 2000")


def palette(style=None) -> dict[str, np.ndarray]:
    """The concept colours of scenes/style.py as sRGB arrays."""
    if style is None:
        from onepass.scenes import style
    return {name: np.array(getattr(style, name).to_rgb()) for name in CONCEPTS}


def chapter_groups(scenes_dir: Path = ROOT / "scenes") -> dict[str, set[str]]:
    """The concept colours each chapter draws, read from its scene modules' source (chNN_*.py and
    the picture modules named *_chNN.py): S.NAME, S.diverging (NEGATIVE and POSITIVE) and
    S.sequential (ATTENTION); the Σ meter (FLOPS) and the random-weights mark (WARNING) are on
    every chapter's frames."""
    groups: dict[str, set[str]] = {}
    for path in sorted(scenes_dir.glob("*.py")):
        found = re.search(r"ch(\d\d)", path.name)
        if not found:
            continue
        source = path.read_text(encoding="utf-8")
        used = set(re.findall(r"\bS\.([A-Z_]+)\b", source)) & set(CONCEPTS)
        if "diverging" in source:
            used |= {"NEGATIVE", "POSITIVE"}
        if "sequential" in source:
            used.add("ATTENTION")
        groups.setdefault(found.group(1), set()).update(used | {"FLOPS", "WARNING"})
    return groups


def together(groups: dict[str, set[str]], labelled: bool = False) -> list[tuple[str, str]]:
    """Pairs of concept colours one chapter shows (without the always-labelled ones unless asked)."""
    pairs = {tuple(sorted(p)) for g in groups.values() for p in itertools.combinations(sorted(g), 2)}
    return sorted(p for p in pairs if labelled or not (set(p) & LABELLED))


def smallest_delta_e(colours: dict[str, np.ndarray], pairs) -> dict[str, tuple[float, str, str]]:
    """Per vision (normal and each simulation): the smallest ΔE over `pairs`, and that pair."""
    out = {}
    for vision in ("normal", *DEFICIENCIES):
        a = simulate(np.array([colours[p] for p, _ in pairs]), vision)
        b = simulate(np.array([colours[q] for _, q in pairs]), vision)
        d = np.atleast_1d(delta_e(a, b))
        k = int(np.argmin(d))
        out[vision] = (float(d[k]), *pairs[k])
    return out


def scale_report(style=None) -> dict[str, dict[str, float]]:
    """Per vision: ΔE between the diverging scale's -t and +t (t = 0.25, 0.5, 1: the smallest), the
    smallest ΔE between successive sequential steps p = 0, 0.1, ..., 1 (its steps stay apart), and
    whether the sequential scale's lightness rises with p throughout."""
    if style is None:
        from onepass.scenes import style
    out = {}
    signs = [(np.array(style.diverging(-t, 1).to_rgb()), np.array(style.diverging(t, 1).to_rgb()))
             for t in (0.25, 0.5, 1.0)]
    steps = np.array([style.sequential(p).to_rgb() for p in np.linspace(0, 1, 11)])
    for vision in ("normal", *DEFICIENCIES):
        sign = min(float(delta_e(simulate(n, vision), simulate(p, vision))) for n, p in signs)
        seen = simulate(steps, vision)
        gaps = np.atleast_1d(delta_e(seen[:-1], seen[1:]))
        lightness = lab(seen)[:, 0]
        out[vision] = {"diverging_signs": sign, "sequential_step": float(gaps.min()),
                       "sequential_rising": bool(np.all(np.diff(lightness) > 0))}
    return out


def text_colour_contrasts(style=None) -> dict[str, float]:
    """Contrast of each colour text is drawn in (INK, MUTED, the concept colours) on the background
    and on a cell (PANEL)."""
    if style is None:
        from onepass.scenes import style
    out = {}
    for name in ("INK", "MUTED", *CONCEPTS):
        c = getattr(style, name).to_rgb()
        out[name] = min(contrast_ratio(c, style.BACKGROUND.to_rgb()), contrast_ratio(c, style.PANEL.to_rgb()))
    return out


# -- flashes -----------------------------------------------------------------------------------
FLASH_DELTA = 0.10       # a change of at least 10% of the maximum relative luminance
FLASH_DARK = 0.80        # ... where the darker of the two is below 0.80
FLASHES_ALLOWED = 3      # per second (2.3.1 general flash threshold)


def read_frames(path: Path, width: int = 256) -> tuple[np.ndarray, float]:
    """(frames as float RGB in [0, 1], shape (n, h, w, 3), fps), scaled to `width` px (areas are
    averages, so the scale changes nothing that matters)."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height,r_frame_rate", "-of", "csv=p=0", str(path)],
                           capture_output=True, text=True, check=True).stdout.strip().split(",")
    w, h = int(probe[0]), int(probe[1])
    num, den = (probe[2].split("/") + ["1"])[:2]
    fps = float(num) / float(den)
    height = max(2, round(h * width / w / 2) * 2)
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-vf", f"scale={width}:{height}:flags=area",
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    frames = np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)
    return frames, fps


def area_luminance(frames: np.ndarray) -> np.ndarray:
    """Mean relative luminance per 341x256-of-1024x768 area (half-overlapping windows): (n, areas).
    A lookup table per byte value and a chunk of frames at a time: a chapter is thousands of frames."""
    n, h, w, _ = frames.shape
    table = (srgb_to_linear(np.arange(256) / 255.0)[:, None] * np.array([0.2126, 0.7152, 0.0722])).astype(np.float32)
    aw, ah = max(1, round(w * 341 / 1024)), max(1, round(h * 256 / 768))
    xs = sorted({*range(0, w - aw + 1, max(1, aw // 2)), w - aw})
    ys = sorted({*range(0, h - ah + 1, max(1, ah // 2)), h - ah})
    out = np.empty((n, len(xs) * len(ys)), np.float32)
    for start in range(0, n, 256):
        chunk = frames[start:start + 256]
        lum = table[chunk[..., 0], 0] + table[chunk[..., 1], 1] + table[chunk[..., 2], 2]
        out[start:start + len(chunk)] = np.stack(
            [lum[:, y:y + ah, x:x + aw].mean(axis=(1, 2)) for y in ys for x in xs], axis=1)
    return out


def transitions(series: np.ndarray) -> list[int]:
    """Frame indices where luminance changed by FLASH_DELTA or more against the last extreme, in the
    direction opposite to the last change, the darker side below FLASH_DARK."""
    out, direction = [], 0
    lo = hi = float(series[0])
    for i, v in enumerate(map(float, series)):
        lo, hi = min(lo, v), max(hi, v)
        if direction != 1 and v - lo >= FLASH_DELTA and lo < FLASH_DARK:
            out.append(i)
            direction, lo, hi = 1, v, v
        elif direction != -1 and hi - v >= FLASH_DELTA and v < FLASH_DARK:
            out.append(i)
            direction, lo, hi = -1, v, v
    return out


def most_flashes_per_second(frames: np.ndarray, fps: float) -> tuple[int, float]:
    """(the most flashes in any one second in any area, when that second starts in s)."""
    window = max(1, int(round(fps)))
    best, when = 0, 0.0
    for series in area_luminance(frames).T:
        marks = np.array(transitions(series))
        if len(marks) < 2:
            continue
        # transitions inside [t, t + 1 s) for every t that starts at one of them
        ends = np.searchsorted(marks, marks + window, side="left")
        counts = (ends - np.arange(len(marks))) // 2
        k = int(np.argmax(counts))
        if counts[k] > best:
            best, when = int(counts[k]), float(marks[k] / fps)
    return best, when


def flash_check(path: Path) -> tuple[int, float]:
    frames, fps = read_frames(Path(path))
    return most_flashes_per_second(frames, fps)


# -- contrast on drawn frames ------------------------------------------------------------------
def box_contrast(frame: np.ndarray, box: tuple[int, int, int, int]) -> float | None:
    """Contrast of the text drawn in pixel box (x0, y0, x1, y1) of `frame` (h, w, 3 uint8): the
    commonest colour of the 2-pixel ring outside the box is the background, the box's pixel
    farthest from it in luminance the ink. None when the box has no pixels on the frame."""
    h, w, _ = frame.shape
    x0, y0, x1, y1 = box
    X0, Y0, X1, Y1 = max(0, x0 - 2), max(0, y0 - 2), min(w, x1 + 2), min(h, y1 + 2)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 <= x0 or y1 <= y0:
        return None
    outer = frame[Y0:Y1, X0:X1].reshape(-1, 3)
    mask = np.ones((Y1 - Y0, X1 - X0), bool)
    mask[y0 - Y0:y1 - Y0, x0 - X0:x1 - X0] = False
    ring = frame[Y0:Y1, X0:X1][mask] if mask.any() else outer
    colours, counts = np.unique(ring.reshape(-1, 3), axis=0, return_counts=True)
    background = colours[np.argmax(counts)] / 255.0
    inside = frame[y0:y1, x0:x1].reshape(-1, 3) / 255.0
    lum = relative_luminance(inside)
    ink = inside[np.argmax(np.abs(lum - relative_luminance(background)))]
    return contrast_ratio(ink, background)


def texts_on(scene):
    """The Text mobjects of a scene's frame that paint something (ink not transparent)."""
    from manim import Text
    out = []
    for mob in scene.mobjects:
        for sub in mob.get_family():
            if isinstance(sub, Text) and len(sub.get_all_points()) and sub.get_fill_opacity() > 0.05:
                out.append(sub)
    return out


COVERED = 1.1    # a box with nothing in it further from its ring than this: the text is under something


def frame_contrasts(scene, dim: float = 0.5) -> list[tuple[float, str, float]]:
    """Draw the scene's current frame with its camera and measure each visible Text on it:
    (contrast, text, height in px, fill colour, fill opacity), lowest first. Texts whose fill opacity is under `dim` are
    left out (a picture's faded, no-longer-current words: decoration in WCAG's sense), and so are
    texts whose box reads under COVERED (drawn under an opaque shape: nothing of them shows)."""
    camera = scene.renderer.camera
    camera.reset()
    camera.capture_mobjects(scene.mobjects)
    frame = np.array(camera.pixel_array)[:, :, :3]
    ph, pw = frame.shape[:2]
    fw, fh = camera.frame_width, camera.frame_height
    cx, cy = camera.frame_center[:2]
    out = []
    for text in texts_on(scene):
        if text.get_fill_opacity() < dim:
            continue
        pts = text.get_all_points()
        (l, b), (r, t) = pts[:, :2].min(axis=0), pts[:, :2].max(axis=0)
        box = (int(np.floor((l - cx + fw / 2) * pw / fw)), int(np.floor((cy + fh / 2 - t) * ph / fh)),
               int(np.ceil((r - cx + fw / 2) * pw / fw)), int(np.ceil((cy + fh / 2 - b) * ph / fh)))
        ratio = box_contrast(frame, box)
        if ratio is not None and ratio >= COVERED:
            out.append((ratio, getattr(text, "text", str(text)), (t - b) * ph / fh,
                        text.get_fill_color().to_hex(), round(float(text.get_fill_opacity()), 2)))
    return sorted(out)


def chapter_contrast(bundle, chapter: str, lang: str = "en", scenes=None) -> list[tuple]:
    """(contrast, scene, text, height px, fill colour, fill opacity) of every text at the end of
    every play of every scene of `chapter` (or of the `scenes` named; a manim dry run of each scene, each play's end drawn once),
    lowest first."""
    from unittest import mock

    from manim import Scene

    from onepass.data import home
    from onepass.engine.dry_run import dry_run
    from onepass.scenes.base import SceneInputs
    from onepass.scenes.registry import scenes_of
    from onepass.scenes.text import enable_text_cache
    found = []
    original_play = Scene.play

    def play_and_measure(self, *args, **kwargs):
        original_play(self, *args, **kwargs)
        found.extend((c, type(self).__name__, *rest) for c, *rest in frame_contrasts(self))

    for cls in scenes_of(chapter):
        if scenes is not None and cls.__name__ not in scenes:
            continue
        with dry_run(), mock.patch.object(Scene, "play", play_and_measure):
            cls(SceneInputs(Path(bundle), lang=lang)).render()
    return sorted(found)


UNSEEN = 1.5     # a text under this contrast is drawn not to be seen (a placeholder in its ground's colour)


def _blend(under: np.ndarray, over: np.ndarray, opacity: float) -> np.ndarray:
    """`over` painted at `opacity` on `under` (sRGB, as cairo composites)."""
    return under * (1.0 - opacity) + over * opacity


def _inside(point: np.ndarray, outline: np.ndarray) -> bool:
    """Whether `point` lies inside the closed outline through `outline`'s points (even-odd rule)."""
    x, y = point
    xs, ys = outline[:, 0], outline[:, 1]
    xj, yj = np.roll(xs, 1), np.roll(ys, 1)
    crosses = ((ys > y) != (yj > y)) & (x < (xj - xs) * (y - ys) / np.where(yj == ys, 1e-12, yj - ys) + xs)
    return bool(np.count_nonzero(crosses) % 2)


def composited_contrasts(scene, dim: float = 0.5) -> list[tuple]:
    """Each visible Text of the scene as it stands, against the ground the film paints under it,
    computed by alpha compositing and not by drawing: every filled shape before the text in draw
    order whose box holds the text's centre is painted on the background in turn (a cell, a chip, a
    dimmed cell at its opacity, a glow's tint), and every filled shape after it that covers it tints
    the text and its ground alike (a glow drawn over the words). Strokes (frames, outlines) paint no
    ground. (contrast, text, ink hex, ground hex), lowest first; texts under `dim` opacity left out."""
    from manim import Text, VMobject
    bg = np.asarray(scene.camera.background_color.to_rgb(), dtype=float)
    order, seen = [], set()
    for mob in scene.mobjects:
        for sub in mob.get_family():
            if id(sub) not in seen and (len(sub.points) or isinstance(sub, Text)):
                seen.add(id(sub))
                order.append(sub)
    order.sort(key=lambda m: getattr(m, "z_index", 0))            # stable: family order within a z
    glyphs = {id(g) for m in order if isinstance(m, Text) for g in m.get_family()}
    fills = []                                                      # (index, box, rgb, opacity)
    for i, m in enumerate(order):
        if id(m) in glyphs or isinstance(m, Text) or not isinstance(m, VMobject):
            continue                    # an image (a heat map's pixels) is no ground this reads
        try:
            opacity = float(m.get_fill_opacity())
        except (AttributeError, IndexError, TypeError):
            continue
        if opacity <= 0.01:
            continue
        pts = m.points[:, :2]
        fills.append((i, pts.min(axis=0), pts.max(axis=0), np.asarray(m.get_fill_color().to_rgb(), dtype=float),
                      opacity, pts))
    out = []
    for i, text in enumerate(order):
        if not isinstance(text, Text):
            continue
        painted = [g for g in text.get_family() if len(g.points)]      # its glyphs as drawn (a fade sets theirs)
        if not painted:
            continue
        alpha = max(float(g.get_fill_opacity()) for g in painted)
        if alpha < dim:
            continue
        pts = text.get_all_points()[:, :2]
        centre = (pts.min(axis=0) + pts.max(axis=0)) / 2
        ground = bg.copy()
        ink = np.asarray(max(painted, key=lambda g: g.get_fill_opacity()).get_fill_color().to_rgb(), dtype=float)
        over = []
        for j, lo, hi, rgb, opacity, outline in fills:
            if not (lo[0] <= centre[0] <= hi[0] and lo[1] <= centre[1] <= hi[1]) or not _inside(centre, outline):
                continue
            if j < i:
                ground = _blend(ground, rgb, opacity)
            else:
                over.append((rgb, opacity))
        ink = _blend(ground, ink, alpha)
        if over and max(o for _, o in over) >= 0.99:                # under an opaque shape: not seen
            continue
        for rgb, opacity in over:
            ground, ink = _blend(ground, rgb, opacity), _blend(ink, rgb, opacity)
        hexes = ["#" + "".join(f"{int(round(c * 255)):02X}" for c in x) for x in (ink, ground)]
        ratio = contrast_ratio(ink, ground)
        if ratio >= UNSEEN:              # words drawn in their ground's own colour are not there to read
            out.append((ratio, getattr(text, "text", str(text)), *hexes))
    return sorted(out, key=lambda r: r[0])


def chapter_composited(bundle, chapter: str, lang: str = "en", scenes=None) -> list[tuple]:
    """composited_contrasts at the end of every play of every scene of `chapter` (a dry run that
    draws nothing): (contrast, scene, text, ink, ground), lowest first."""
    from unittest import mock

    from manim import Scene

    from onepass.data import home
    from onepass.engine.dry_run import dry_run
    from onepass.scenes.base import SceneInputs
    from onepass.scenes.registry import scenes_of
    from onepass.scenes.text import enable_text_cache
    found = []
    original_play = Scene.play

    def play_and_measure(self, *args, **kwargs):
        original_play(self, *args, **kwargs)
        found.extend((c, type(self).__name__, *rest) for c, *rest in composited_contrasts(self))

    # labels as a render process gets them (copied once built; shelved on disk for the next process):
    # the same outlines, and the sweep of a chapter costs its plays' arithmetic, not Pango's
    enable_text_cache(folder=home.label_cache_dir())
    try:
        for cls in scenes_of(chapter):
            if scenes is not None and cls.__name__ not in scenes:
                continue
            with dry_run(draw=False), mock.patch.object(Scene, "play", play_and_measure):
                cls(SceneInputs(Path(bundle), lang=lang)).render()
    finally:
        enable_text_cache(False)
    return sorted(found, key=lambda r: r[0])


# -- command line ------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("palette")
    f = sub.add_parser("flashes")
    f.add_argument("videos", nargs="+", type=Path)
    c = sub.add_parser("contrast")
    c.add_argument("--chapter", required=True)
    c.add_argument("--bundle", required=True, type=Path)
    c.add_argument("--lang", default="en")
    args = parser.parse_args(argv)
    if args.what == "palette":
        colours, groups = palette(), chapter_groups()
        for label, pairs in (("concepts a chapter shows together", together(groups)),
                             ("... with the labelled mark", together(groups, labelled=True))):
            print(label)
            for vision, (d, a, b) in smallest_delta_e(colours, pairs).items():
                print(f"  {vision:13} smallest ΔE {d:5.1f}  {a}/{b}")
        for vision, r in scale_report().items():
            print(f"  {vision:13} diverging −/+ ΔE {r['diverging_signs']:5.1f}, sequential step ΔE "
                  f"{r['sequential_step']:4.1f}, lightness rising: {r['sequential_rising']}")
        print("text colours, lowest contrast on background/panel:",
              ", ".join(f"{k} {v:.2f}" for k, v in text_colour_contrasts().items()))
    elif args.what == "flashes":
        for video in args.videos:
            n, t = flash_check(video)
            print(f"{video.name}: at most {n} flash(es) in one second (at {t:.1f} s): "
                  f"{'pass' if n <= FLASHES_ALLOWED else 'FAIL'}")
    else:
        found = chapter_contrast(args.bundle, args.chapter, args.lang)
        seen, under = {}, set()
        for ratio, scene, text, height, ink, opacity in found:
            seen.setdefault((scene, text), (ratio, height, ink, opacity))
            if ratio < 4.5:
                under.add((scene, text))
        print(f"chapter {args.chapter}: {len(found)} text measurements, {len(seen)} distinct texts, "
              f"{len(under)} under 4.5:1 at some play's end")
        for (scene, text), (ratio, height, ink, opacity) in sorted(seen.items(), key=lambda kv: kv[1])[:8]:
            print(f"{ratio:5.2f}  {scene:12} {height:4.0f} px  {ink} x{opacity}  {text[:60]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
