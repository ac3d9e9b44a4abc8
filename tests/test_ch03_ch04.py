"""Chapters 03 (the stack) and 04 (the vote): what they show is the bundle's, and it fits the frame.

Scenes are dry-run without drawing frames (conftest.build_scene(draw=False)); every
expectation is recomputed here straight from the tensors, the tiny model or the config,
not through the helpers the scenes use.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from onepass.data import extract, tokenizer
from onepass.data.facts import ch03 as ch03_facts
from onepass.data.facts import ch04 as ch04_facts
from onepass.scenes import style as S
from tests.helpers import (
    KNOWN_NARROW,
    MIN_CONTENT_SHARE,
    assert_picture_follows_words,
    build_scene,
    frame_checks,
)
from onepass.voiceover import script
from onepass.words import markup
from onepass.words import numbers as N
from onepass.words.catalog import Words, english, variant_of

CH03 = ["Heads", "Mlp", "Climb", "Lens"]
CH04 = ["LastRow", "Softmax", "Shaping", "Pick"]


def softmax(z, t=1.0):
    z = np.asarray(z, dtype=np.float64) / t
    e = np.exp(z - z.max())
    return e / e.sum()


# -- chapter 03 ----------------------------------------------------------------
def test_heads_scene_names_every_head_and_the_width_split(tiny_bundle, built):
    cfg = tiny_bundle.config
    H, d = cfg["n_head"], cfg["n_embd"]
    texts = built("03", "Heads").built_texts
    habits = ch03_facts.head_habits(tiny_bundle)
    assert [h["habit"] for h in habits] == ["spread out"] * H      # random weights: no head has a habit
    assert all(f"head {h + 1} · spread out" in texts for h in range(H))
    # the followed head is chapter 02's: the least uniform last row of layer 1
    p = tiny_bundle["probs"][0, :, -1, :].astype(np.float64)
    followed = int(np.argmin(-(p * np.log(np.clip(p, 1e-30, None))).sum(-1)))
    assert f"head {followed + 1}: followed in chapter 02" in texts
    assert f"d = {d} = {H} heads × {d // H}" in texts


def test_each_heads_habit_is_read_from_its_pattern():
    """A trained model's heads have habits (GPT-2's layer 1 has heads that read the first token,
    the token before, or themselves); the title of each head names it from its own weights."""
    T = 6
    first = np.zeros((T, T))
    first[:, 0] = 1.0
    before = np.eye(T, k=-1)
    before[0, 0] = 1.0
    itself = np.eye(T)
    even = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    mixed = 0.55 * before + 0.45 * even                      # mostly the token before: still a habit
    probs = np.stack([first, before, itself, even, mixed])[None]     # [L=1, H=5, T, T]
    habits = ch03_facts.head_habits({"probs": probs})
    assert [h["habit"] for h in habits] == ["first token", "token before", "itself", "spread out", "token before"]
    assert habits[0]["share"] == 1.0
    one = ch03_facts.head_habits({"probs": np.ones((1, 3, 1, 1))})     # one token: it can read only itself
    assert [h["habit"] for h in one] == ["itself"] * 3


def test_mlp_counts_and_parameters_come_from_the_bundle_and_the_model(tiny_bundle, built):
    texts = built("03", "Mlp").built_texts
    hidden = tiny_bundle["mlp_hidden"][0, -1]
    assert f"{int((hidden > 0).sum()):,} positive" in texts
    assert f"{int((hidden < 0).sum()):,} negative" in texts
    first = [N.fmt_signed(float(v), 2) for v in hidden[:8]]
    assert all(v in texts for v in first)
    # parameter counts as torch counts them in the tiny model's first block
    model = extract.load_model(extract.WeightsSpec("tiny"))
    attn = sum(p.numel() for p in model.transformer.h[0].attn.parameters())
    mlp = sum(p.numel() for p in model.transformer.h[0].mlp.parameters())
    assert N.fmt_int(attn) in texts and N.fmt_int(mlp) in texts
    assert f"MLP = {mlp / attn:.1f} × attention" in texts


def test_meter_totals_match_the_ledger(tiny_bundle, built):
    led = tiny_bundle.ledger()
    L = tiny_bundle.config["n_layer"]
    assert built("03", "Heads").meter.value == led.after("L0.out")
    assert built("03", "Mlp").meter.value == led.after("L0.mlp_down")
    climb = built("03", "Climb")
    assert climb.meter.value == led.after(f"L{L - 1}.mlp_down")
    assert N.fmt_int(led.after(f"L{L - 1}.mlp_down")) in climb.built_texts
    assert f"layer {L} of {L}" in climb.built_texts
    assert built("03", "Lens").meter.value == led.after(f"L{L - 1}.mlp_down")
    assert built("04", "LastRow").meter.value == led.total == led.after("unembed")
    assert all(built("04", n).meter.value == led.total for n in ("Softmax", "Shaping", "Pick"))
    d, V = tiny_bundle.config["n_embd"], tiny_bundle.config["vocab_size"]
    assert led["unembed"].flops == 2 * d * V
    assert f"{led['unembed'].formula} = {N.fmt_int(2 * d * V)} FLOPs" in built("04", "LastRow").built_texts


def test_logit_lens_matches_a_direct_recomputation(tiny_bundle, built):
    import torch
    model = extract.load_model(extract.WeightsSpec("tiny"))
    with torch.no_grad():
        h = torch.from_numpy(tiny_bundle["resid_post"][:, -1, :])
        logits = (model.transformer.ln_f(h) @ model.transformer.wte.weight.T).double().numpy()
    probs = np.stack([softmax(z) for z in logits])
    top = probs.argmax(-1)
    assert list(top) == list(tiny_bundle["lens_ids"][:, 0])
    # the last floor's guess is the model's own answer
    assert top[-1] == int(np.argmax(tiny_bundle["logits"][-1]))
    stored = tiny_bundle["lens_probs"][:, 0]
    assert np.allclose(probs.max(-1), stored, rtol=1e-5)
    shown = built("03", "Lens").built_texts
    decimals = N.prob_decimals(stored)
    for l, i in enumerate(top):
        assert S.clip_token(tokenizer.decode([int(i)]), 12) in shown
        assert N.fmt_prob(stored[l], decimals) in shown


# -- chapter 04 ----------------------------------------------------------------
def test_top_candidates_are_the_bundles(tiny_bundle, built):
    probs = softmax(tiny_bundle["logits"][-1])
    order = np.argsort(-probs)[:ch04_facts.N_BARS]
    assert [int(i) for i in order] == tiny_bundle.meta["top_ids"][:ch04_facts.N_BARS]
    texts = built("04", "Softmax").built_texts
    decimals = N.prob_decimals(probs[order])
    for rank, i in enumerate(order, start=1):
        assert f"#{rank}" in texts
        assert S.clip_token(tokenizer.decode([int(i)])) in texts
        assert N.fmt_prob(probs[i], decimals) in texts
    assert f"softmax over all {len(probs):,} scores: the top {len(order)}" in texts


def test_top_p_count_matches_a_direct_recomputation(tiny_bundle, built):
    probs = np.sort(softmax(tiny_bundle["logits"][-1]))[::-1]
    n = 0
    mass = 0.0
    while mass < ch04_facts.TOP_P:
        mass += probs[n]
        n += 1
    assert f"{n:,} tokens hold {100 * ch04_facts.TOP_P:g}%" in built("04", "Softmax").built_texts
    assert any(f": {n:,}" in t for t in built("04", "Shaping").built_texts)
    # and the rule itself on numbers one can check by hand
    assert ch04_facts.nucleus_size(np.array([0.05, 0.5, 0.15, 0.3]), 0.9) == 3
    assert ch04_facts.nucleus_size(np.array([0.05, 0.5, 0.15, 0.3]), 0.8) == 2
    assert ch04_facts.nucleus_size(np.array([0.05, 0.5, 0.15, 0.3]), 1.0) == 4


def test_temperature_top_probability_and_entropy(tiny_bundle, built):
    texts = built("04", "Shaping").built_texts
    z = tiny_bundle["logits"][-1]
    for t in ch04_facts.TEMPERATURES:
        q = softmax(z, t)
        assert f"T = {t:.1f}" in texts
        assert f"top {N.fmt_prob(q.max())}" in texts
        assert f"entropy {-(q * np.log(q)).sum():.2f} nats" in texts
    # top-k: the kept bars renormalised to share everything
    kept = np.sort(softmax(z))[::-1][:ch04_facts.TOP_K]
    kept = kept / kept.sum()
    dec = N.prob_decimals(kept)
    assert all(N.fmt_prob(p, dec) in texts for p in kept)


def test_token_of_interest_is_ranked_from_the_logits(tiny_bundle, built):
    assert tiny_bundle.meta["watch"] == {"text": " mat", "id": tokenizer.encode(" mat")[0]}
    probs = softmax(tiny_bundle["logits"][-1])
    i = tiny_bundle.meta["watch"]["id"]
    rank = int((probs > probs[i]).sum()) + 1
    scene = built("04", "Softmax")
    assert "interest" in [c["beat"] for c in scene.cues]
    if rank > ch04_facts.N_BARS:
        assert f"#{rank:,}" in scene.built_texts
    assert f"{S.clip_token(' mat')} #{rank:,}" in scene.built_texts


def test_no_token_of_interest_skips_that_beat(tiny_long_bundle):
    assert tiny_long_bundle.meta["watch"] is None
    scene = build_scene(tiny_long_bundle, "04", "Softmax", draw=False)
    assert "interest" not in [c["beat"] for c in scene.cues]


def test_token_of_interest_is_configurable():
    assert extract.watch_token("The cat sat on the")["text"] == " mat"
    assert extract.watch_token("The capital of Pakistan is") is None
    assert extract.watch_token("The capital of Pakistan is", " Islamabad") == {
        "text": " Islamabad", "id": tokenizer.encode(" Islamabad")[0]}
    assert extract.watch_token("The cat sat on the", "none") is None
    with pytest.raises(extract.ExtractError, match="single token"):
        extract.watch_token("The cat sat on the", " two words")


def test_greedy_and_seeded_sample_picks(tiny_bundle, built):
    probs = softmax(tiny_bundle["logits"][-1])
    greedy = int(np.argmax(probs))
    assert greedy == tiny_bundle.meta["generated"][0]["id"]    # chapter 06 continues from the same pick
    sample = tiny_bundle.meta["sample"]
    texts = built("04", "Pick").built_texts
    assert S.show_token(tokenizer.decode([greedy])) in texts
    assert S.show_token(sample["text"]) in texts
    assert f"sampling: T = {sample['temperature']:.1f}, seed {sample['seed']}" in texts
    rank = int((probs > probs[sample["id"]]).sum()) + 1
    assert f"rank {rank:,} · {N.fmt_prob(probs[sample['id']])}" in texts
    T = tiny_bundle.T
    assert f"{T} → {T + 1} tokens · chapter 06 runs the whole pass again" in texts


def test_narration_numbers_and_honest_variants(tiny_bundle):
    led = tiny_bundle.ledger()
    L = tiny_bundle.config["n_layer"]
    words = Words.load("en")
    ch03 = {k: f.text for k, f in script.chapter_lines("03", tiny_bundle, led, words).items()}
    ch04 = {k: f.text for k, f in script.chapter_lines("04", tiny_bundle, led, words).items()}
    assert N.spoken_count(led.after(f"L{L - 1}.mlp_down"), words) in ch03["climb_total"]
    assert N.spoken_count(led.total, words) in ch04["unembed"]
    assert "noise" in ch03["lens"] and "random weights" in ch04["softmax"]
    n_p = ch04_facts.nucleus_size(softmax(tiny_bundle["logits"][-1]), ch04_facts.TOP_P)
    assert f"{n_p:,} tokens to reach 90 percent" in ch04["tail"]
    # the real-weights wording fills too (every value it names is provided)
    for chapter in ("03", "04"):
        values = script.chapter_values(chapter, tiny_bundle, led, words)
        for beat in script.beats(chapter):
            if beat != "title":
                assert words.line(script.line_id(chapter, beat), values, synthetic=False).text


# the markers the scenes wait on, per line and wording: a translation or a lecturer's script keeps
# these names (words/catalog.py refuses one that does not), so they are the chapters' interface
MARKS = {
    "ch03-heads": ["question", "side", "grid", "titles", "sink", "followed"],
    "ch03-heads.synthetic": ["question", "side", "grid", "titles", "followed", "chance"],
    "ch03-split": ["slices", "paid"],
    "ch03-mlp_in": ["alone", "same", "why"],
    "ch03-norm": ["row", "rescale", "drift", "level", "train"],
    "ch03-mlp_up": ["counts", "positive", "below"],
    "ch03-mlp_down": ["residual", "flops"],
    "ch03-params": ["attention", "ratio"],
    "ch03-climb": ["stacks", "stream", "early", "late", "cost"],
    "ch03-climb_total": ["each"],
    "ch03-lens": ["first", "climb", "last"],
    "ch03-lens.synthetic": ["first", "climb", "noise", "last", "floors"],
    "ch03-lens_settle": ["free"],
    "ch03-lens_settle.synthetic": ["free"],
    "ch04-last_row": ["rows", "only", "seen", "others"],
    "ch04-unembed": ["scores", "agree", "same", "cost", "total"],
    "ch04-softmax": ["top", "unsure"],
    "ch04-softmax.synthetic": ["top", "even", "opinion"],
    "ch04-tail": ["together", "nucleus"],
    "ch04-interest": ["ranks"],
    "ch04-interest.synthetic": ["ranks", "caveat"],
    "ch04-temperature": ["temp-0", "temp-1", "temp-2", "sharpens"],
    "ch04-spread": ["nats", "zero", "here"],
    "ch04-topk": ["survive", "renorm"],
    "ch04-topp": ["adapts", "here", "longer"],
    "ch04-greedy": ["takes", "loop"],
    "ch04-greedy.synthetic": ["takes", "noise", "loop"],
    "ch04-sample": ["only", "lands", "rank"],
    "ch04-append": ["again"],
}


def test_every_line_marks_where_its_picture_moves_at_the_start_of_a_sentence(tiny_bundle):
    # GPT-2's lines (a modern decoder's wordings, chNN-<beat>.<variant>, are tests/test_modern_*'s)
    lines = {k: m for k, m in english().items() if k.startswith(("ch03-", "ch04-")) and ".describe" not in k
             and variant_of(k) is None}
    assert {k: markup.marks(m.forms[0]) for k, m in lines.items()} == MARKS
    # each marker opens its sentence (the picture moves as the sentence that says it begins)
    words = Words.load("en")
    for chapter in ("03", "04"):
        values = script.chapter_values(chapter, tiny_bundle, tiny_bundle.ledger(), words)
        for mid in (k for k in MARKS if k.startswith(f"ch{chapter}-")):
            line = markup.fill(words.template(mid), values)
            starts = script.sentence_starts(line.text, script.split_sentences(line.text))
            for name, at in line.marks:
                assert at in starts, f"{mid}: marker {name} is not at a sentence's start"


def test_numbers_and_counts_the_narration_composes_come_from_the_catalog():
    from onepass.voiceover.scripts.ch04 import ordinal
    words = Words.load("en")
    said = [ordinal(n, words) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 1001)]
    assert said == ["first", "second", "third", "fourth", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
                    "111th", "1,001st"]
    # Urdu's first to tenth are words, never a digit with واں
    ur = Words.load("ur")
    assert [ordinal(n, ur) for n in (1, 3)] == [ur.text("film:ordinal-1"), ur.text("film:ordinal-3")]
    assert not any(ch.isdigit() for ch in ordinal(3, ur))
    assert words.text("ch04:n-tokens", count=1, n="1") == "1 token"
    assert words.text("ch04:n-tokens", count=1065, n="1,065") == "1,065 tokens"
    qps = Words.load("qps")
    assert all(ordinal(n, qps).startswith("⟦") for n in (1, 2, 3, 4))


@pytest.mark.parametrize("chapter,name", [("03", "Heads"), ("03", "Lens"), ("04", "Softmax"), ("04", "Pick")])
def test_long_prompt_keeps_text_on_frame_and_legible(tiny_long_bundle, chapter, name, monkeypatch):
    spans = {}
    assert frame_checks(tiny_long_bundle, chapter, name, monkeypatch, spans) == []
    # and the content uses the content area (tests/test_weights_and_text.py checks every chapter
    # on the default prompt; beats listed there as narrow today are let through here too)
    narrow = {k: v for k, v in spans.items() if v < MIN_CONTENT_SHARE and k not in KNOWN_NARROW}
    assert narrow == {}, f"content spans under {MIN_CONTENT_SHARE:.0%} of the content width: {narrow}"


WORDS = re.compile(r"[^\W\d_]{2,}")


def gpt2_strings(bundle) -> set[str]:
    """Every string of GPT-2's own these chapters draw: the prompt's tokens, the lens's guesses, the
    vote's candidates and picks, the vocabulary's first entries, each as the film shows a token."""
    ids = {*bundle.ids, *(int(i) for i in np.asarray(bundle["lens_ids"]).ravel()), *bundle.meta["top_ids"],
           *range(5), *(g["id"] for g in bundle.meta["generated"]), bundle.meta["sample"]["id"]}
    if bundle.meta["watch"]:
        ids.add(bundle.meta["watch"]["id"])
    return {bundle.prompt, *bundle.tokens, *(S.show_token(tokenizer.readable(i)) for i in ids)}


def outside_the_catalog(texts, bundle) -> list[str]:
    """Built texts with words that the pseudo-language did not write: each should be GPT-2's (a
    token as shown, cut with '…' or followed by its rank) or nothing."""
    own = gpt2_strings(bundle)

    def gpt2s(t: str) -> bool:
        t = re.sub(r" #[\d,]+$", "", t)
        return t in own or (t.endswith("…") and any(o.startswith(t[:-1]) for o in own))
    return sorted({t for t in texts if WORDS.search(t) and "⟦" not in t and not gpt2s(t)})


@pytest.mark.parametrize("chapter,name", [("03", n) for n in CH03] + [("04", n) for n in CH04])
def test_the_pseudo_language_with_a_long_prompt_keeps_every_word_in_the_catalog_and_on_frame(
        tiny_long_bundle, chapter, name, monkeypatch):
    """qps: every message wrapped in ⟦ ⟧ and ~40% longer; the layouts hold it (tests/test_words.py
    runs every scene on the short prompt)."""
    built = []
    assert frame_checks(tiny_long_bundle, chapter, name, monkeypatch, lang="qps", built=built) == []
    assert outside_the_catalog(built[0].built_texts, tiny_long_bundle) == []
    assert_picture_follows_words(built[0], f"qps {name}")     # its sentences split apart, its markers timed


def test_token_of_interest_inside_the_top_bars_is_marked_on_its_bar(tiny_bundle, bundle_root):
    top_text = tokenizer.decode([tiny_bundle.meta["top_ids"][1]])
    if len(tokenizer.encode(top_text)) != 1:
        pytest.skip("the tiny model's runner-up does not re-encode to one token")
    b = extract.extract(tiny_bundle.prompt, "tiny", root=bundle_root, log=lambda m: None, watch=top_text)
    assert b.meta["watch"]["id"] == tiny_bundle.meta["top_ids"][1]
    scene = build_scene(b, "04", "Softmax", draw=False)
    assert "interest" in [c["beat"] for c in scene.cues]
    assert f"{S.clip_token(top_text)} #2" in scene.built_texts
    assert "ranks second" in script.chapter_lines("04", b, b.ledger(), Words.load("en"))["interest"].text


@pytest.mark.needs_weights
def test_real_gpt2_vote_figures(real_weights, bundle_root):
    """The seeds' figures, as chapter 04 computes and shows them (runs only with real weights)."""
    cat = extract.extract("The cat sat on the", real_weights, root=bundle_root, log=lambda m: None)
    f = ch04_facts.vote_facts(cat)
    assert [c["text"] for c in f["top"][:4]] == [" floor", " bed", " couch", " ground"]
    assert f["watch"]["rank"] == 31 and N.fmt_prob(f["watch"]["prob"]) == "0.4%"
    assert "#31" in build_scene(cat, "04", "Softmax", draw=False).built_texts
    pak = extract.extract("The capital of Pakistan is", real_weights, root=bundle_root, log=lambda m: None)
    f = ch04_facts.vote_facts(pak)
    assert f["n_p"] == 1065
    stats = [(N.fmt_prob(t["top"]), round(t["entropy"], 2)) for t in f["temps"]]
    assert stats == [("93.4%", 0.32), ("10.0%", 5.74), ("0.6%", 9.32)]


def test_the_top_candidates_are_the_stable_sorts_first_ones_ties_included():
    """data/facts/ch04.top_order picks chapter 04's temperature columns without sorting the whole
    vocabulary: the same ids, in the same order, as a stable sort of every probability, where many
    probabilities tie (a peaked softmax underflows the tail to 0) and where the cut falls in a tie."""
    from onepass.data.facts.ch04 import softmax64, top_order
    rng = np.random.default_rng(4)
    cases = [rng.integers(0, 3, size=40).astype(float), np.zeros(9), softmax64(rng.normal(size=500) * 400, 0.2),
             rng.normal(size=1000)]
    for values in cases:
        for n in (0, 1, 5, 8, len(values), len(values) + 2):
            assert top_order(values, n).tolist() == np.argsort(-values, kind="stable")[:n].tolist(), (values, n)
