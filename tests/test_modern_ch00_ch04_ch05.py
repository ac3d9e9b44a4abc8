"""Chapters 00, 04 and 05 for the modern decoder (issue 49): the model's own tokenizer and merges,
GPT-2's tokens beside them, the model's own predictions, its family named truthfully; GPT-2's
wording kept as it was."""
from __future__ import annotations

import pytest

from onepass.data import arch, extract, tokenizer
from onepass.data.facts.ch00 import pick_word, token_facts
from onepass.data.facts.ch04 import vote_facts
from onepass.voiceover import script
from onepass.words.catalog import Words

PROMPTS = ("The cat sat on the", "unbelievably quickly, 12345 dogs!", "السلام علیکم 👍🏽 naïve café")


def model_tokenizer(name):
    card = arch.model(name)
    return arch.of(card).tokenizer(card)


@pytest.mark.parametrize("name", ["smollm2-135m-instruct", "qwen3-0.6b"])
def test_merge_replay_ends_on_the_tokenizers_ids(name):
    """The replay of the model's own merges ends on the ids its tokenizer gives, pre-token by pre-token."""
    tok = model_tokenizer(name)
    for prompt in PROMPTS:
        for word in tok.pre_tokens(prompt):
            steps = tok.bpe_replay(word)
            assert [tok.symbol_id(s) for s in steps[-1]] == tok.encode_plain(word), word
            assert b"".join(tok.symbol_bytes(s) for s in steps[0]) == word.encode("utf-8")


def test_llama3_replay_is_shown_only_where_it_ends_on_the_ids():
    """Llama 3 takes a whole-token piece at once (ignore_merges): ' việc' merges to three tokens but
    encodes as one. The ladder picks a word whose replay ends on the tokenizer's own ids."""
    tok = model_tokenizer("llama-3.2-1b")
    lad = pick_word("The cat sat on the", tok)
    assert lad["ids"] == tok.encode_plain(lad["word"])


def test_vocabulary_parts_add_up_in_id_order():
    smol = model_tokenizer("smollm2-135m-instruct")
    vf = smol.vocab_facts()
    assert (vf.special, vf.byte_tokens, vf.merges) == (17, 235, 48_900)
    assert smol.vocab_order() == [("special", 17), ("bytes", 235), ("merges", 48_900)]
    assert vf.total == smol.vocab_size() == 49_152
    llama = model_tokenizer("llama-3.2-1b")
    assert [k for k, _ in llama.vocab_order()] == ["bytes", "merges", "special"]
    assert llama.vocab_facts().total == 128_256 and llama.bos_text == "<|begin_of_text|>"


def test_smollm2_chapter00_facts(smollm2_bundle):
    f = token_facts(smollm2_bundle)
    tok = smollm2_bundle.tokenizer
    assert f["ids"] == [504, 2644, 2643, 335, 260]
    assert f["case_ids"] == [tok.encode_plain(w)[0] for w in ("The", " the", "the")] == [504, 260, 1195]
    lad = f["ladder"]
    assert lad["ids"] == tok.encode_plain(lad["word"])
    assert all(m["rank"] == tok.merge_ranks()[m["pair"]] for m in lad["merges"])
    cmp = f["compare"]
    assert cmp["gpt2_ids"] == tokenizer.encode("The cat sat on the")
    assert cmp["table"] == 49_152 * 576 and cmp["gpt2_table"] == 50_257 * 768
    assert cmp["bos"] is None          # SmolLM2 puts nothing in front
    assert f["vocab"].total == smollm2_bundle.shape.vocab


def test_smollm2_chapter00_lines_name_the_model_and_gpt2_beside_it(smollm2_bundle):
    for lang in ("en", "es", "ur"):
        lines = script.chapter_lines("00", smollm2_bundle, smollm2_bundle.ledger(), Words.load(lang))
        text = {b: l.text for b, l in lines.items()}
        assert "SmolLM2-135M-Instruct" in text["split"]
        assert "49" in text["vocab"] and "50" not in text["vocab"].split("49")[0]
        assert "GPT-2" in text["ratio"] and dict(lines["ratio"].marks).keys() >= {"became", "gpt2", "letters"}
        assert "table" in dict(lines["handoff"].marks)


def test_gpt2_chapter00_wording_is_gpt2s(tiny_bundle):
    lines = script.chapter_lines("00", tiny_bundle, tiny_bundle.ledger(), Words.load("en"))
    assert lines["split"].text.startswith("GPT-2's tokenizer cuts it into")
    assert "50,257 tokens in all" in lines["vocab"].text
    assert "gpt2" not in dict(lines["ratio"].marks) and "table" not in dict(lines["handoff"].marks)
    assert token_facts(tiny_bundle)["compare"] is None


def test_smollm2_vote_reads_the_models_own_tokens(smollm2_bundle):
    """SmolLM2-135M-Instruct's top next tokens are ' cat' 7.1 % and ' moon' 5.0 % (its own vocabulary,
    not GPT-2's texts of the same ids)."""
    f = vote_facts(smollm2_bundle)
    assert [c["text"] for c in f["top"][:2]] == [" cat", " moon"]
    assert round(100 * f["top"][0]["prob"], 1) == 7.1 and round(100 * f["top"][1]["prob"], 1) == 5.0
    assert f["watch"]["asked"] == " mat" and f["watch"]["text"] == " mat"
    lines = script.chapter_lines("04", smollm2_bundle, smollm2_bundle.ledger(), Words.load("en"))
    assert "“cat” at 7.1 percent" in lines["softmax"].text
    assert lines["unembed"].text.startswith("To turn that row into a word, SmolLM2-135M-Instruct")


def test_watch_default_dropped_when_not_one_token():
    class Split:
        def encode_plain(self, text):
            return [1, 2]
    assert extract.watch_token("The cat sat on the", None, Split(), "X") is None


def test_smollm2_family_named(smollm2_bundle):
    for lang in ("en", "es", "ur"):
        lines = script.chapter_lines("05", smollm2_bundle, smollm2_bundle.ledger(), Words.load(lang))
        assert "SmolLM2-135M-Instruct" in lines["decoder_only"].text
        assert "Llama" in lines["decoder_only"].text
        assert "GPT " not in lines["decoder"].text and not lines["decoder"].text.startswith("GPT")


def test_tiny_llama_synthetic_wording(tmp_path):
    b = extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct", root=tmp_path, log=lambda m: None)
    lines = script.chapter_lines("04", b, b.ledger(), Words.load("en"))
    assert "none of this is SmolLM2-135M-Instruct's opinion" in lines["softmax"].text



def test_the_bytes_a_vocabulary_lacks_are_the_ones_it_has_no_single_token_for():
    """The grid of 256 bytes lights in red the ones the model's vocabulary lacks (SmolLM2: control codes and
    bytes UTF-8 never uses); they are as many as the narration says, and GPT-2 lacks none."""
    from onepass.data.facts.ch00 import missing_bytes
    smol = model_tokenizer("smollm2-135m-instruct")
    missing = missing_bytes(smol)
    assert len(missing) == 256 - smol.vocab_facts().byte_tokens == 21
    assert {0xC0, 0xC1, 0xFF} <= set(missing) and not {ord(" "), ord("a"), 0xE2} & set(missing)
    assert missing_bytes(tokenizer) == []


def test_smollm2_vote_keeps_its_tags_apart_and_its_scales_ends_lit_clear_of_the_line(smollm2_bundle):
    """Chapter 04 with SmolLM2 (its first ids are long special tokens): at the end of every beat of LastRow and
    Shaping nothing crowds (tests/helpers.crowding_check, which now reads a grid's column tags as it reads
    numbers: '<|endoftext|>' and '<|im_start|>' over the scores, each fitted to its whole column, touched), and in
    the entropy scale's beat words keep MIN_INSIDE_GAP clear of the glows around them. The scale's lit ends light
    the words and the value, not the tick: around the tick the glow's edge ran along the line ('an even split'
    and 10.8 boxed across the axis)."""
    from manim import WHITE
    from onepass.scenes.pictures_ch04 import EntropyScale
    from tests.helpers import MIN_INSIDE_GAP, after_every_beat, build_scene, crowding_check
    found, strict = [], []
    every, spread = crowding_check(found), crowding_check(strict, inside_gap=MIN_INSIDE_GAP)

    def check(scene, key):
        every(scene, key)
        if key == "spread":
            spread(scene, key)
    with pytest.MonkeyPatch.context() as mp, after_every_beat(mp, check):
        for name in ("LastRow", "Shaping"):
            build_scene(smollm2_bundle, "04", name, draw=False)
    assert found == [] and strict == []
    scale = EntropyScale([1.0, 5.0], 10.8, [[0.5, 0.2], [0.1, 0.1]], ["a", "b"], ["c", "d"], ("zero", "even"), "t", 8.0)
    for k in (0, 1):
        lit, tick, value = scale.end_lit(k, WHITE), scale.ticks[2 * k], scale.ticks[2 * k + 1]
        assert lit.get_top()[1] < tick.get_bottom()[1] - lit.get_stroke_width() / 100     # clear of the tick and line
        assert lit.get_top()[1] > value.get_top()[1] and lit.get_bottom()[1] < scale.ends[k].get_bottom()[1]
