"""The whole GPT-2 family on screen and in the narration: every chapter reads correctly at every size.

What a lecturer asked "and the big one?" relies on: `--model distilgpt2|gpt2|gpt2-medium|gpt2-large|
gpt2-xl` lays out that model's own heads (12, 16, 20 or 25) and floors (6 to 48) legibly at 480p,
a window with the true count said where they cannot all fit; the narration says the model's own
numbers and names it; chapter 06 places it among its family and GPT-3.

The bundles are the `mini` weights: each size's own layers and heads at a small width (extracted in
seconds), so every count a scene lays out is the real model's. Every scene is laid out at three sizes
that span the layouts (SWEPT, below); the narration is checked at all five.
"""
from __future__ import annotations

import re

import pytest

from onepass.data import extract, models
from onepass.data.chapters import CHAPTERS as CHAPTER_MODULES
from onepass.data.facts.ch03 import HEAD_PANELS, head_panels
from onepass.data.facts.ch06 import family_facts
from onepass.data.flops import GPT3, Shape, decode_step_flops, kv_cache_numbers_per_token, parameter_counts
from onepass.film.plan.keys import chapter_source
from onepass.scenes import style as S
from onepass.scenes.widgets import STACK_ROWS, layer_window
from tests.helpers import KNOWN_IN_CAPTION_BAND, box, frame_checks
from onepass.voiceover import script
from onepass.words.catalog import Words
from onepass.engine.text import string_of

CHAPTERS = ["00", "01", "02", "03", "04", "05", "06"]
ALL_SCENES = [(c, name) for c in CHAPTERS for name in chapter_source(CHAPTER_MODULES[c].module).scenes]
# Every chapter dry-runs at three sizes (SWEPT): each scene that reads the model's shape (its heads, floors,
# widths, the cache's layers, the family table), and of the chapters that barely do, one scene (00's
# tokens; 04's vote and 05's masks after their first scene read only the vocabulary and one head):
# SHAPE_FREE's scenes lay out the same at any size.
SHAPE_FREE = {("00", "SameWord"), ("00", "Merges"), ("00", "Compression"), ("04", "Softmax"), ("04", "Shaping"),
              ("04", "Pick"), ("05", "Towers"), ("05", "Families")}
# Three sizes span what a layout meets: GPT-2 small at the edge where everything still fits (12 floors =
# STACK_ROWS, 12 heads = HEAD_PANELS), medium windowed (24 floors, 16 heads), XL the most of both (48 floors,
# 25 heads: an odd count, the longest numbers). DistilGPT2 (6 floors, 12 heads) fits as small does, with
# fewer floors; large (36, 20) lies between medium and XL; the windows themselves are checked at every
# count above (test_a_tall_stack..., test_a_window_of_heads...), and the narration and the family table at
# every size below. About a minute on 2 cores.
SWEPT = ("gpt2", "gpt2-medium", "gpt2-xl")
CASES = [(m, c, n) for m in SWEPT for c, n in ALL_SCENES if (c, n) not in SHAPE_FREE]


@pytest.fixture(scope="module")
def mini(bundle_root):
    """mini("gpt2-xl"): 'The cat sat on the' through that size's layers and heads at width 4·n_head."""
    cache = {}

    def get(model: str):
        if model not in cache:
            cache[model] = extract.extract("The cat sat on the", "mini", root=bundle_root, log=lambda m: None,
                                           model=model)
        return cache[model]
    return get


def test_the_mini_bundles_have_each_sizes_own_layers_and_heads(mini):
    for name, m in models.FAMILY.items():
        b = mini(name)
        assert (b.shape.n_layer, b.shape.n_head, b.model) == (m.n_layer, m.n_head, name)


# -- what the windows show -------------------------------------------------------------------------
@pytest.mark.parametrize("n_layer", [2, 6, 12, 13, 24, 36, 48])
def test_a_tall_stack_shows_its_first_and_last_floors_and_one_row_for_the_rest(n_layer):
    rows = layer_window(n_layer)
    assert len(rows) <= STACK_ROWS
    covered = [l for r in rows for l in (range(r[0], r[1] + 1) if isinstance(r, tuple) else [r])]
    assert covered == list(range(n_layer))            # every layer once, bottom to top
    assert rows[0] == 0 and rows[-1] == n_layer - 1     # layer 1 and the top layer always drawn
    gaps = [r for r in rows if isinstance(r, tuple)]
    assert len(gaps) == (0 if n_layer <= STACK_ROWS else 1)


@pytest.mark.parametrize("featured", [0, 11, 12, 17, 24])
def test_a_window_of_heads_holds_the_followed_one_and_says_how_many_there_are(mini, featured):
    b = mini("gpt2-xl")
    shown = head_panels(b, featured)
    assert len(shown) == HEAD_PANELS < b.shape.n_head
    assert featured in shown and shown == list(range(shown[0], shown[0] + HEAD_PANELS))
    assert head_panels(mini("gpt2"), 3) == list(range(12))       # twelve fit: all of them


# -- every chapter at every size: on frame, legible, and the grids fit -------------------------------
def _visible_outside(scene, caption_band_known: bool = False) -> list[str]:
    """Anything drawn (not only text) that leaves the frame or reaches into the caption band (unless
    the beat is one of helpers.KNOWN_IN_CAPTION_BAND)."""
    out = []
    for mob in scene.mobjects:
        for sub in mob.get_family():
            if sub.submobjects or len(sub.points) == 0:
                continue
            if not (sub.get_fill_opacity() > 0 or (sub.get_stroke_opacity() > 0 and sub.get_stroke_width() > 0)):
                continue
            left, right, bottom, top = box(sub)
            if left < -S.FRAME_W / 2 - 0.01 or right > S.FRAME_W / 2 + 0.01 or top > S.FRAME_H / 2 + 0.01 \
                    or (bottom < S.CAPTION_TOP - 0.05 and not caption_band_known):
                out.append(f"{type(sub).__name__} at x {left:.2f}..{right:.2f}, y {bottom:.2f}..{top:.2f}")
    return out


def _overlapping_words(scene) -> list[str]:
    """Pairs of visible texts drawn over one another (a stack's floor names, head numbers squeezed together)."""
    from manim import Text
    boxes = []
    for mob in scene.mobjects:
        for sub in mob.get_family():
            if isinstance(sub, Text) and sub.get_fill_opacity() > 0 and len(sub.get_all_points()):
                boxes.append((string_of(sub), *box(sub)))
    out = []
    for i, (ta, l1, r1, b1, t1) in enumerate(boxes):
        for tb, l2, r2, b2, t2 in boxes[i + 1:]:
            w, h = min(r1, r2) - max(l1, l2), min(t1, t2) - max(b1, b2)
            if w > 0.05 and h > 0.05 and w * h > 0.3 * min((r1 - l1) * (t1 - b1), (r2 - l2) * (t2 - b2)):
                out.append(f"{ta!r} over {tb!r}")
    return out


@pytest.mark.parametrize("model,chapter,name", CASES, ids=[f"{m}-{c}-{n}" for m, c, n in CASES])
def test_every_chapter_reads_at_every_size(mini, monkeypatch, model, chapter, name):
    """Nothing off-frame, in the caption band or below S.SMALL at the end of any beat (frame_checks);
    and at each beat's end nothing drawn leaves the frame and no two words are drawn over each other."""
    import onepass.scenes.base as base
    from contextlib import contextmanager
    problems, original = [], base.ChapterScene.beat

    @contextmanager
    def also_shapes(self, key):
        with original(self, key) as b:
            yield b
        known = f"{chapter} {name}/{key}" in KNOWN_IN_CAPTION_BAND
        problems.extend(f"{name}/{key}: {p}" for p in _visible_outside(self, known) + _overlapping_words(self))
    monkeypatch.setattr(base.ChapterScene, "beat", also_shapes)     # frame_checks wraps this one in turn
    built = []
    problems += frame_checks(mini(model), chapter, name, monkeypatch, built=built)
    assert problems == [], problems[:12]
    assert set(SHAPE_FREE) <= set(ALL_SCENES) and set(SWEPT) <= set(models.FAMILY)
    if (chapter, name) == ("06", "Scale"):      # the family table: every model named, this one among them
        words = Words.load()
        names = {words.model_name(m) for m in models.FAMILY} | {words.text("ch06:model-gpt3")}
        assert names <= set(built[0].built_texts)


# -- the narration says the model's own numbers and names it ---------------------------------------
def _lines(bundle, chapter, lang="en") -> dict[str, str]:
    words = Words.load(lang)
    return {beat: line.text for beat, line in script.chapter_lines(chapter, bundle, bundle.ledger(), words).items()}


@pytest.mark.parametrize("model", list(models.FAMILY))
def test_the_narration_says_this_models_layers_and_heads_and_names_it(mini, model):
    b = mini(model)
    L, H, name = b.shape.n_layer, b.shape.n_head, Words.load().model_name(model)
    ch03, ch06, ch02 = _lines(b, "03"), _lines(b, "06"), _lines(b, "02")
    spoken = " ".join(t for ch in CHAPTERS for t in _lines(b, ch).values())
    assert not re.search(r"\btwelve\b", spoken, re.I)
    numbers = lambda text: set(re.findall(r"\d[\d,]*", text))          # noqa: E731
    assert f"Stacked {L} high, such layers make {name}:" in ch03["climb"] and f"{L} sets of weights" in ch03["climb"]
    assert f"After layer {L} " in ch03["climb_total"] and f"{L} layers at" in ch03["climb_total"]
    assert f"After layer {L} " in ch03["lens"]
    assert str(H) in numbers(ch03["heads"]) and f"head {b.featured_head() + 1} of {H}" in ch02["intro"]
    assert name in ch06["family"] and f"for {name}." in ch06["gpt3"]
    if model != "gpt2":
        assert "GPT-2 small" not in ch03["climb"] + ch06["gpt3"] + ch06["family"]
    # the window of heads is said as such: "Here are 12 of its 25 attention patterns"
    shown = len(head_panels(b, b.featured_head()))
    phrase = (Words.load().text("ch03:heads-all", n=H) if shown == H
              else Words.load().text("ch03:heads-some", shown=shown, n=H))
    assert phrase in ch03["heads"]


@pytest.mark.parametrize("lang", ["es", "ur"])
def test_each_language_names_the_model_in_latin_letters_and_says_its_layers(mini, lang):
    b = mini("gpt2-xl")
    ch03, ch06 = _lines(b, "03", lang), _lines(b, "06", lang)
    assert "GPT-2 XL" in ch03["climb"] and "GPT-2 XL" in ch06["gpt3"] and "GPT-2 XL" in ch06["family"]
    assert "48" in ch03["climb"] and "GPT-2 small" not in ch03["climb"] + ch06["gpt3"]


# -- chapter 06's scale table ------------------------------------------------------------------------
def test_the_scale_table_prices_the_family_and_gpt3_with_the_ledger_and_lights_this_model(mini, tiny_bundle):
    rows = family_facts(mini("gpt2-medium"))
    assert [r["key"] for r in rows] == ["distilgpt2", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "gpt3"]
    assert [r["key"] for r in rows if r["ours"]] == ["gpt2-medium"]
    small = next(r for r in rows if r["key"] == "gpt2")
    shape = Shape(n_layer=12, n_head=12, n_embd=768, vocab=50257)
    # GPT-2 small's 124,439,808 parameters (DESIGN.md), its KV cache of 2 x 12 x 768 numbers per token
    assert small["params"] == 124_439_808 and small["kv_numbers"] == 2 * 12 * 768
    assert small["token_flops"] == decode_step_flops(shape, 5 + 1)
    assert rows[-1]["params"] == parameter_counts(GPT3, 2048)["total"]
    assert rows[-1]["kv_numbers"] == kv_cache_numbers_per_token(GPT3) == 2 * 96 * 12288
    real = [r for r in rows if not r["ours"]]          # the mini bundle's own row has its own small width
    assert all(a["params"] < b["params"] for a, b in zip(real, real[1:]))
    # a model outside the family (the 2-layer test model) gets a row of its own, lit
    own = [r for r in family_facts(tiny_bundle) if r["ours"]]
    assert [r["key"] for r in own] == ["other"] and own[0]["layers"] == tiny_bundle.shape.n_layer
