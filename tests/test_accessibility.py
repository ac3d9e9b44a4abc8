"""Colour and motion (issue 43 item 8): WCAG 2.1 1.4.1, 1.4.3 and 2.3.1, from the palette and from
drawn frames and videos (bench/accessibility.py holds the checks; docs/ACCESSIBILITY.md the table).
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from bench import accessibility as A
from onepass.scenes import style as S

pytest.importorskip("colour")

# the floors this film keeps (docs/ACCESSIBILITY.md): CIEDE2000 between two concept colours one
# chapter shows, in normal vision and under each simulated dichromacy (Machado 2009, severity 1)
NORMAL_FLOOR = 8.0
SIMULATED_FLOOR = 4.0
SIGNS_FLOOR = 15.0       # the diverging scale's -t and +t, t = 0.25 .. 1
TEXT_CONTRAST = 4.5      # WCAG 1.4.3 for text under 18 pt (the film's SMALL and NUMBER sizes)

# the palette before issue 43 (commit 470f641): the check must reject it
BEFORE = {"QUERY": "#EF476F", "ATTENTION": "#C77DFF"}


def _rgb(hex_: str) -> np.ndarray:
    return np.array([int(hex_[i:i + 2], 16) / 255 for i in (1, 3, 5)])


def _floors_failed(colours) -> list[str]:
    pairs = A.together(A.chapter_groups())
    failed = []
    for vision, (d, a, b) in A.smallest_delta_e(colours, pairs).items():
        floor = NORMAL_FLOOR if vision == "normal" else SIMULATED_FLOOR
        if d < floor:
            failed.append(f"{vision}: {a}/{b} ΔE {d:.1f} < {floor}")
    return failed


def test_concept_colours_a_chapter_shows_together_stay_apart_under_colour_blindness():
    assert _floors_failed(A.palette()) == []
    before = dict(A.palette(), **{name: _rgb(h) for name, h in BEFORE.items()})
    assert any(f.startswith("protanopia: ATTENTION/NEGATIVE") for f in _floors_failed(before))
    assert any(f.startswith("tritanopia: POSITIVE/QUERY") for f in _floors_failed(before))


def test_chapter_groups_read_from_the_scenes():
    groups = A.chapter_groups()
    assert sorted(groups) == ["00", "01", "02", "03", "04", "05", "06", "07"]
    assert {"QUERY", "KEY", "VALUE", "ATTENTION"} <= groups["02"]
    assert {"NEGATIVE", "POSITIVE", "MLP"} <= groups["03"]


def test_diverging_signs_and_sequential_steps_survive_every_simulation():
    for vision, r in A.scale_report().items():
        assert r["diverging_signs"] >= SIGNS_FLOOR, vision
        assert r["sequential_rising"], f"{vision}: the sequential scale's lightness must rise with p"


def test_every_text_colour_reads_on_the_background_and_on_a_cell():
    low = {k: round(v, 2) for k, v in A.text_colour_contrasts().items() if v < TEXT_CONTRAST}
    assert low == {}
    assert A.contrast_ratio(S.INK.to_rgb(), S.BACKGROUND.to_rgb()) > 15


def test_contrast_measured_on_a_drawn_frame_matches_the_colours():
    """A still drawn by manim's camera: INK and MUTED words at the film's smallest size, on the
    background and on a cell; the measure reads each within 10% of the colours' own ratio, and a
    dim word (MUTED at 40%) below 4.5."""
    from manim import Rectangle, Scene, Text, VGroup, DOWN

    from onepass.engine.dry_run import dry_run
    with dry_run(draw=True):
        scene = Scene()
        ink = Text("attention", font=S.SANS, font_size=S.SMALL, color=S.INK)
        muted = Text("softmax 0.42", font=S.SANS, font_size=S.SMALL, color=S.MUTED)
        cell = Rectangle(width=4, height=1, fill_color=S.PANEL, fill_opacity=1, stroke_width=0)
        on_cell = Text("keys", font=S.SANS, font_size=S.SMALL, color=S.MUTED).move_to(cell)
        dim = Text("faded", font=S.SANS, font_size=S.SMALL, color=S.MUTED).set_opacity(0.4)
        scene.camera.background_color = S.BACKGROUND
        scene.add(VGroup(ink, muted, VGroup(cell, on_cell), dim).arrange(DOWN))
        found = {text: ratio for ratio, text, *_ in A.frame_contrasts(scene, dim=0.0)}
    bg, panel = S.BACKGROUND.to_rgb(), S.PANEL.to_rgb()
    assert found["attention"] == pytest.approx(A.contrast_ratio(S.INK.to_rgb(), bg), rel=0.1)
    assert found["softmax0.42"] == pytest.approx(A.contrast_ratio(S.MUTED.to_rgb(), bg), rel=0.1)
    assert found["keys"] == pytest.approx(A.contrast_ratio(S.MUTED.to_rgb(), panel), rel=0.1)
    assert found["faded"] < TEXT_CONTRAST


def _video(path, pattern, fps=30, seconds=2, size=(160, 96)):
    """A grey video whose frames are white where pattern(frame index) is true, else black."""
    w, h = size
    frames = np.stack([np.full((h, w, 3), 255 if pattern(i) else 20, np.uint8) for i in range(fps * seconds)])
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
                    "-r", str(fps), "-i", "-", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-qp", "0", str(path)],
                   input=frames.tobytes(), check=True)
    return path


def test_flash_checker_catches_four_flashes_a_second_and_passes_two(tmp_path):
    four = _video(tmp_path / "four.mp4", lambda i: (i // 4) % 2 == 1)     # 30 fps: on 4, off 4 = 3.75 Hz
    two = _video(tmp_path / "two.mp4", lambda i: (i // 8) % 2 == 1)      # on 8, off 8 = 1.9 Hz
    still = _video(tmp_path / "still.mp4", lambda i: False)
    fade = _video(tmp_path / "fade.mp4", lambda i: i >= 30)               # one change: no flash
    n4, _ = A.flash_check(four)
    n2, _ = A.flash_check(two)
    assert n4 >= 4 > A.FLASHES_ALLOWED
    assert n2 == 2 <= A.FLASHES_ALLOWED
    assert A.flash_check(still)[0] == 0 and A.flash_check(fade)[0] == 0


def test_a_small_flashing_patch_counts_only_when_it_covers_a_quarter_of_the_area(tmp_path):
    """WCAG counts flashes over a 341x256 area of a 1024x768 screen: a blinking dot does not flash."""
    w, h, fps = 320, 180, 30
    frames = np.full((fps * 2, h, w, 3), 20, np.uint8)
    for i in range(fps * 2):
        if (i // 4) % 2:
            frames[i, 80:86, 150:156] = 255
    path = tmp_path / "dot.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
                    "-r", str(fps), "-i", "-", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-qp", "0", str(path)],
                   input=frames.tobytes(), check=True)
    assert A.flash_check(path)[0] == 0


def test_a_generated_token_differs_from_a_prompt_token_by_shape_not_colour_alone():
    """Chapter 06's context: the tokens the model wrote carry a second, inner outline (1.4.1)."""
    from onepass.scenes.widgets import TokenChip
    prompt, wrote = TokenChip("·the"), TokenChip("·Mong", color=S.LOGIT, generated=True)
    assert not hasattr(prompt, "mark") and len(prompt) == 2
    mark = wrote.mark
    assert mark in wrote.submobjects and mark.get_stroke_width() > 0 and mark.get_fill_opacity() == 0
    assert wrote.box.width > mark.width > wrote.text_mob.width and wrote.box.height > mark.height > wrote.text_mob.height
    assert np.allclose(mark.get_center(), wrote.box.get_center())


def test_numbers_on_heatmap_cells_read_at_4_5_to_1_on_every_fill_of_both_scales():
    """A matrix's numbers take S.ink_on(their cell): INK on dark cells, near-black on the light ends
    (INK on a full POSITIVE cell read at 2.5:1, on a full ATTENTION cell at 2.1:1)."""
    from onepass.scenes.widgets import NumberGrid
    fills = [S.diverging(v, 1.0) for v in np.linspace(-1, 1, 201)] + [S.sequential(p) for p in np.linspace(0, 1, 101)]
    worst = min(A.contrast_ratio(S.ink_on(f).to_rgb(), f.to_rgb()) for f in fills)
    assert worst >= TEXT_CONTRAST
    assert A.contrast_ratio(S.INK.to_rgb(), S.POSITIVE.to_rgb()) < TEXT_CONTRAST      # why ink_on exists
    # a cell drawn at part opacity (chapter 03's width split lights its head at 85%): the colour it makes
    from manim import interpolate_color
    for name in ("ATTENTION", "POSITIVE", "NEGATIVE", "LOGIT", "TOKEN"):
        for opacity in np.linspace(0, 1, 21):
            made = interpolate_color(S.BACKGROUND, getattr(S, name), opacity)
            assert A.contrast_ratio(S.ink_on(getattr(S, name), opacity).to_rgb(), made.to_rgb()) >= TEXT_CONTRAST
    m = NumberGrid(np.array([[-1.0, -0.2, 0.0, 0.4, 1.0]]), vmax=1.0)
    for rc, text in m.values_mobs.items():
        ratio = A.contrast_ratio(text.get_fill_color().to_rgb(), m.cells[rc].get_fill_color().to_rgb())
        assert ratio >= TEXT_CONTRAST, (m.values[rc], ratio)


@pytest.mark.render
def test_every_text_of_chapter_05s_mask_scene_reads_at_4_5_to_1_on_its_drawn_frames(tiny_peaked_bundle):
    """Measured on frames: the end of every play of ch05 MaskOff drawn (a dry run) and every visible
    text's contrast read from the pixels. Its percentages sit on the sequential scale's cells, where
    INK on a full cell measured 2.1:1 before S.ink_on."""
    found = A.chapter_contrast(tiny_peaked_bundle.path, "05", scenes={"MaskOff"})
    assert len(found) > 100
    low = sorted({(round(r, 2), text) for r, _, text, *_ in found if r < TEXT_CONTRAST})
    assert low == []


def test_a_swell_never_fills_a_box_over_the_words_it_holds():
    """Swell (the film's Indicate) coloured a chip's filled box whole: for a second a row of tokens
    was a row of solid yellow blocks. At its height the words take the colour, the box its outline."""
    from manim import Square
    from onepass.scenes.follow import Swell
    from onepass.scenes.widgets import TokenChip
    chip = TokenChip(" the", 262)
    top = Swell(chip, color="#FFD166").create_target()
    assert top.box.get_fill_color().to_hex() == chip.box.get_fill_color().to_hex()
    assert top.box.get_stroke_color().to_hex() == top.text_mob.get_color().to_hex() == "#FFD166"
    bare = Swell(Square(fill_opacity=1), color="#FFD166").create_target()     # no words: coloured whole
    assert bare.get_fill_color().to_hex() == "#FFD166"


def test_the_composited_ground_catches_a_token_on_a_bright_cell_under_a_glow():
    """Issue 53 item 6, the class of the mask beat's red-framed cell: the ground under a text is every
    filled shape before it composited on the background (a cell, a glow's tint at its opacity), a
    shape after it tints text and ground alike; frames (strokes) paint no ground. A token on a bright
    cell under the red glow is caught, the same token on a dark cell reads."""
    from manim import Rectangle, Scene, Text

    from onepass.engine.dry_run import dry_run
    from onepass.scenes.follow import glow

    def ratio(fill, *, over=False) -> float:
        with dry_run():
            scene = Scene()
            scene.camera.background_color = S.BACKGROUND
            cell = Rectangle(width=1.2, height=0.5, fill_color=fill, fill_opacity=1, stroke_width=1)
            token = Text("·cat", font=S.MONO, font_size=S.SMALL, color=S.TOKEN).move_to(cell)
            light = glow(cell, color=S.WARNING)
            scene.add(*((cell, token, light) if over else (cell, light, token)))
            [(r, text, ink, ground)] = A.composited_contrasts(scene)
        return r
    bright, dark = ratio(S.diverging(1.0, 1.0)), ratio(S.PANEL)
    assert bright < TEXT_CONTRAST <= dark
    assert bright == pytest.approx(A.contrast_ratio(S.TOKEN.to_rgb(), np.asarray(
        S.diverging(1.0, 1.0).to_rgb()) * 0.9 + np.asarray(S.WARNING.to_rgb()) * 0.1), rel=1e-6)
    assert ratio(S.PANEL, over=True) < dark          # a tint over the words lowers their contrast too


CHAPTERS = ("00", "01", "02", "03", "04", "05", "06", "07")


@pytest.fixture(scope="module")
def llama_bundle(bundle_root):
    """'The cat sat on the' through a tiny model of SmolLM2's (Llama's) architecture: RoPE, grouped
    keys and values, a gated MLP, its own tokenizer; other pictures than GPT-2's in every chapter."""
    from onepass.data import extract
    return extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct", root=bundle_root,
                           log=lambda m: None)


@pytest.mark.parametrize("model", ["gpt2", "llama"])
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_text_of_every_chapter_reads_at_4_5_to_1_on_its_composited_ground(request, chapter, model):
    """Every text of the chapter, at the end of every play, on the ground composited under it (a dry
    run, no pixels): 4.5:1 or more. What this caught: the mask beat's tokens on a bright score's cell
    (3.9-4.4:1, now on a dark one), INK on chapter 03's lit floors (2.2:1, their words now turn dark),
    tints at 15-30% over words (chapter 01's lane start 3.9:1, chapter 04's embedding table 4.45:1,
    now the glow's 10%), chapter 06's numbers under the cache's tints (4.0-4.5:1: its lights over
    the grids are outlines now)."""
    bundle = request.getfixturevalue("tiny_peaked_bundle" if model == "gpt2" else "llama_bundle")
    found = A.chapter_composited(bundle.path, chapter)
    assert len(found) > 1000
    low = sorted({(round(r, 2), scene, text, ink, ground) for r, scene, text, ink, ground in found
                  if r < TEXT_CONTRAST})
    assert low == []
    if chapter == "02":       # the mask beat's tokens are measured on their cells, not on the background
        peeks = [r for r, scene, text, ink, ground in found
                 if ink == S.TOKEN.to_hex() and ground not in (S.BACKGROUND.to_hex(), S.PANEL.to_hex())]
        assert peeks and min(peeks) >= TEXT_CONTRAST
