"""The peaked synthetic model, the real-weights path (--weights DIR), tokens that are part of a
character, prompts beyond English letters, and chapter thumbnails.

The real-weights path is the one a user with GPT-2 on disk runs: a directory written by
save_pretrained, loaded by from_pretrained, no synthetic mark, narration without its
random-weights variants. Here the directory holds the tiny peaked model, so every chapter is
also dry-run on sharp predictions (a top-1 near 100%, a top-p set of one token).
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from onepass.data import extract, tokenizer
from onepass.data.chapters import CHAPTERS
from onepass.data.facts import ch00 as ch00_facts
from onepass.data.facts import ch04 as ch04_facts
from onepass.scenes import style as S
from onepass.scenes.registry import scenes_of
from tests.helpers import KNOWN_NARROW, build_scene, stand_in_clip
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import SYNTHETIC, Words

PROMPT = "The cat sat on the"
MARK = "synthetic weights — not GPT-2 small's predictions"     # the tiny GPT-2 imitates GPT-2 small's card


def nucleus(p: np.ndarray, top_p: float) -> int:
    return int(np.searchsorted(np.cumsum(np.sort(p)[::-1]), top_p)) + 1


# -- the peaked model -------------------------------------------------------------------------
def test_peaked_model_predicts_as_sharply_as_a_trained_one():
    """GPT-2 small's shapes; on the default prompt a top-1 of 20-95%, a top-p 0.9 set of 1-5
    tokens, and a logit lens that settles: the last layers agree with the output, the first do not."""
    import torch  # the model itself: this test runs it (a few seconds)
    model = extract.synthetic_model("peaked")
    assert (model.config.n_layer, model.config.n_embd, model.config.vocab_size) == (12, 768, 50257)
    ids = tokenizer.encode(PROMPT)
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
        p = torch.softmax(out.logits[0, -1].double(), -1).numpy()
        lens = [int(model.lm_head(model.transformer.ln_f(h[0, -1])).argmax())
                for h in out.hidden_states[1:-1]]      # the last hidden state already has ln_f applied
    assert 0.20 <= p.max() <= 0.95
    assert 1 <= nucleus(p, ch04_facts.TOP_P) <= 5
    final = int(p.argmax())
    assert lens[-2:] == [final, final] and lens[0] != final
    # 'random' is the same model with the final LayerNorm's gain at 1: as flat as ever
    with torch.no_grad():
        model.transformer.ln_f.weight.fill_(1.0)
        q = torch.softmax(model(torch.tensor([ids])).logits[0, -1].double(), -1).numpy()
    assert q.max() < 0.01


def test_peaked_bundles_are_synthetic_and_marked(tiny_peaked_bundle):
    b = tiny_peaked_bundle
    assert b.synthetic and b.meta["weights"]["spec"] == "tiny-peaked"
    assert b.last_probs.max() > 0.2
    scene = build_scene(b, "04", "Softmax", draw=False)
    assert MARK in scene.built_texts
    assert "random weights" in script.chapter_lines("04", b, b.ledger())["softmax"].text


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_a_modern_decoders_random_weights_mark_names_its_own_model(lang, bundle_root):
    """Issue 49: the random-weights mark of a SmolLM2 film made with random weights says whose predictions
    these are not, SmolLM2's, on screen and in the kit (description, handout, notebook), never GPT-2's."""
    from onepass.film.kit.publish import synthetic_mark
    b = extract.extract(PROMPT, "tiny", model="smollm2-135m-instruct", root=bundle_root, log=lambda m: None)
    words = Words.load(lang)
    mark = synthetic_mark(b, words)
    assert b.synthetic and b.arch != "gpt2"
    assert words.model_name("smollm2-135m-instruct") in mark and "GPT-2" not in mark, mark
    if lang == "en":
        scene = build_scene(b, "04", "Softmax", draw=False)
        assert mark in scene.built_texts and not any("GPT-2's predictions" in t for t in scene.built_texts)


# -- the real-weights path ------------------------------------------------------------------
@pytest.fixture(scope="module")
def dir_bundle(saved_weights, bundle_root):
    """The tiny peaked model saved with save_pretrained and read back through --weights DIR."""
    return extract.extract(PROMPT, str(saved_weights("tiny-peaked")), root=bundle_root, log=lambda m: None)


def test_weights_directory_is_read_as_real_weights(dir_bundle, tiny_peaked_bundle, saved_weights):
    w = dir_bundle.meta["weights"]
    assert not dir_bundle.synthetic and w["seed"] is None
    assert w["identity"].startswith(f"dir:{saved_weights('tiny-peaked').resolve()}:")
    assert "model.safetensors" in w["identity"]                   # provenance: the files it read
    assert w["sha256"] == tiny_peaked_bundle.meta["weights"]["sha256"]   # the very numbers saved
    np.testing.assert_allclose(dir_bundle.last_probs, tiny_peaked_bundle.last_probs, atol=1e-6)
    assert dir_bundle.meta["model_id"] == "gpt2"


def test_a_tiny_gpt2_saved_with_save_pretrained_loads_as_weights(saved_weights, bundle_root):
    b = extract.extract(PROMPT, str(saved_weights("tiny")), root=bundle_root, log=lambda m: None)
    assert not b.synthetic and b.config["n_layer"] == extract.TINY_CONFIG["n_layer"]
    lines = script.chapter_lines("04", b, b.ledger())
    # real weights' wording: the vote read as the model's own, not the random-weights caveat
    assert lines["softmax"].text.startswith("A softmax") and "random" not in lines["softmax"].text


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_every_chapter_builds_from_a_weights_directory(dir_bundle, chapter):
    """What a user with real GPT-2 sees: no mark on any frame, every line in its real-weights
    wording (never the synthetic variant), no U+FFFD; and, on these peaked numbers, at the end of
    every beat no text off the frame, in the caption band or too small, and content that uses
    at least half the content width."""
    from tests.helpers import MIN_CONTENT_SHARE, frame_checks   # the one frame check
    words = Words.load("en")
    lines = script.chapter_lines(chapter, dir_bundle, dir_bundle.ledger(), words)
    for beat, line in lines.items():       # the real-weights wording of every line
        if beat != "title":
            assert line == words.line(script.line_id(chapter, beat),
                                      script.chapter_values(chapter, dir_bundle, dir_bundle.ledger(), words))
    built, problems, spans = [], [], {}

    def keep(*args, **kwargs):
        built.append(build_scene(*args, **kwargs))
        return built[-1]
    for cls in scenes_of(chapter):
        with pytest.MonkeyPatch.context() as mp:      # one scene's checks at a time
            mp.setattr("tests.helpers.build_scene", keep)
            problems += frame_checks(dir_bundle, chapter, cls.__name__, mp, spans)
        scene = built[-1]
        assert MARK not in scene.built_texts and getattr(scene, "random_mark", None) is None
        assert scene.cues and all(c["text"] == lines[c["beat"]].text for c in scene.cues)
        assert not any("\ufffd" in t for t in scene.built_texts)
    assert problems == []
    narrow = {k: v for k, v in spans.items() if v < MIN_CONTENT_SHARE and k not in KNOWN_NARROW}
    assert narrow == {}, f"content spans under {MIN_CONTENT_SHARE:.0%} of the content width: {narrow}"
    widened = sorted(k for k in KNOWN_NARROW if k.split()[0] == chapter and spans.get(k, 1.0) >= MIN_CONTENT_SHARE)
    assert widened == [], f"no longer narrow (or gone): remove {widened} from KNOWN_NARROW"


def test_synthetic_variants_are_for_synthetic_weights_only(dir_bundle, tiny_peaked_bundle):
    """The same numbers, marked synthetic, speak the honest variants; from a directory, never."""
    spoken = 0
    words = Words.load("en")
    for chapter in CHAPTERS:
        synthetic = script.chapter_lines(chapter, tiny_peaked_bundle, tiny_peaked_bundle.ledger())
        real = script.chapter_lines(chapter, dir_bundle, dir_bundle.ledger())
        for beat in script.beats(chapter):
            if words.has(script.line_id(chapter, beat) + SYNTHETIC):
                assert real[beat].text != synthetic[beat].text, (chapter, beat)
                spoken += 1
    assert spoken >= 5


# -- tokens that are part of a character ------------------------------------------------------
def test_partial_byte_tokens_show_their_bytes():
    ids = tokenizer.encode("😀 你好")
    shown = [S.show_token(i) for i in ids]
    assert shown[0] == "<F0><9F><98>" and "\ufffd" not in "".join(shown)
    assert S.show_token(tokenizer.token_bytes(ids[0])) == shown[0]
    assert S.show_token(tokenizer.encode(" cat")[0]) == "·cat"
    assert S.clip_token("<F0><9F><98><80>", 7) == "<F0>…"          # a byte is never cut in half
    assert tokenizer.readable(ids[0]) == "<F0><9F><98>"


@pytest.fixture(scope="module")
def world_bundle(bundle_root):
    """Emoji, Chinese and Arabic: tokens that are parts of characters."""
    return extract.extract("😀🎉 你好 مرحبا", "tiny", root=bundle_root, log=lambda m: None)


def test_bundle_tokens_never_show_the_replacement_character(world_bundle):
    assert not any("\ufffd" in t for t in world_bundle.tokens)
    assert "<F0><9F><98>" in world_bundle.tokens


@pytest.mark.parametrize("chapter,name", [("02", "Scores"), ("04", "Softmax"), ("06", "Loop")])
def test_chapters_draw_partial_bytes_as_bytes(world_bundle, chapter, name):
    texts = build_scene(world_bundle, chapter, name, draw=False).built_texts
    assert not any("\ufffd" in t for t in texts)
    if name != "Softmax":     # (its candidates are whole tokens here; it shows the prompt's none)
        assert any("<F0>" in t or "<E4>" in t or "<D8>" in t for t in texts)


# -- prompts beyond English letters -----------------------------------------------------------
def test_counts_read_as_a_reader_counts():
    words = Words.load("en")        # the catalog's plural forms: one, and everything else
    assert [words.text("ch00:word-count", count=n, n=N.fmt_int(n)) for n in (1, 1234)] == ["1 word", "1,234 words"]
    assert ch00_facts.characters("👍🏽 e\u0301") == 3               # skin tone and accent join their character
    assert ch00_facts.characters("The cat") == 7


def test_a_one_word_prompt_says_one_word(bundle_root):
    b = extract.extract("😀🎉🐱🚀🌍", "tiny", root=bundle_root, log=lambda m: None)
    scene = build_scene(b, "00", "Prompt", draw=False)
    assert "1 word · 5 characters" in scene.built_texts


@pytest.mark.parametrize("prompt", ["😀🎉🐱🚀🌍", "Antidisestablishmentarianism", "你好世界，今天天气很好"])
def test_the_merge_replay_stays_legible_for_any_prompt(prompt):
    lad = ch00_facts.pick_word(prompt)
    assert lad["n_bytes"] <= ch00_facts.MAX_WORD_BYTES and len(lad["merges"]) <= ch00_facts.MAX_MERGES_SHOWN
    assert prompt.lstrip().startswith(lad["word"].lstrip()) or lad["word"] in prompt
    assert tokenizer.bpe_replay(lad["word"]) == lad["steps"]        # still the real replay


@pytest.mark.skipif(shutil.which("fc-list") is None, reason="fontconfig's fc-list is not installed")
@pytest.mark.parametrize("what,query", [("emoji", ":charset=1f600"), ("Chinese", ":lang=zh"),
                                        ("Arabic", ":lang=ar"), ("Devanagari", ":lang=hi"),
                                        ("Korean", ":lang=ko"), ("Thai", ":lang=th")])
def test_a_font_covers_every_script_a_prompt_may_hold(what, query):
    """Pango falls back to these (Makefile: fonts-noto-core, fonts-noto-cjk, fonts-symbola)."""
    found = subprocess.run(["fc-list", query, "family"], capture_output=True, text=True).stdout
    assert found.strip(), f"no installed font draws {what}: run `make system`"


# -- thumbnails -----------------------------------------------------------------------------
def test_thumbnail_moment_is_the_end_of_a_beat():
    from onepass.film.run.join import settled_moment
    scene_a = [{"beat": "title", "start": 0.0, "clip_start": 0.0, "end": 2.0},
               {"beat": "a", "start": 2.0, "clip_start": 2.0, "end": 5.0},
               {"beat": "b", "start": 6.0, "clip_start": 6.0, "end": 9.0}]
    scene_b = [{"beat": "c", "start": 0.0, "clip_start": 0.0, "end": 4.0}]
    at = settled_moment([scene_a, scene_b], [10.0, 5.0])
    # beat ends (just before the next beat starts): a 5.85, b 9.85, c 14.85; 40% of 15 s is 6 s
    assert at == pytest.approx(6.0 - 0.15)
    assert settled_moment([[]], [3.0]) is None


def test_thumbnail_has_the_title_drawn_on_it(tmp_path):
    from PIL import Image

    from onepass.film.run.join import thumbnail
    video = tmp_path / "black.mp4"
    stand_in_clip(video, seconds=1, size="320x180", fps=25, picture="color", colour="0x202020")
    plain, titled = tmp_path / "plain.png", tmp_path / "titled.png"
    thumbnail(video, plain, 0.5)
    thumbnail(video, titled, 0.5, title="02 · One attention head")
    band = np.asarray(Image.open(titled).convert("L"))[140:, :]
    assert band.max() > 200 and (band > 200).mean() > 0.02            # white letters in the band
    assert np.asarray(Image.open(plain).convert("L")).max() < 60     # nothing drawn without a title
    assert not list(tmp_path.glob(".*part*"))                        # no temporary left behind
