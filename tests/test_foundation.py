"""The spine: tokenizer, extraction checks, bundle format and cache, FLOPs ledger, CLI."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from onepass.data import bundle as bundle_io
from onepass.data import extract, tokenizer
from onepass.data.flops import GPT2_SMALL, forward_ledger, kv_cache_numbers_per_token, parameter_counts

ROOT = Path(__file__).resolve().parents[1]
URDU = "السلام علیکم"   # the lecture seed's line: 13 tokens for 12 characters


# -- tokenizer ---------------------------------------------------------------

def test_tokenizer_pins_gpt2_ids():
    assert tokenizer.encode("The cat sat on the") == [464, 3797, 3332, 319, 262]
    assert [tokenizer.encode(w) for w in ("the", "The", " the")] == [[1169], [464], [262]]
    assert len(tokenizer.encode(URDU)) == 13 and len(URDU) == 12
    assert tokenizer.encode("<|endoftext|>") == [tokenizer.EOT_ID] == [50256]
    assert tokenizer.vocab_size() == 50257


def test_tokenizer_round_trips_odd_text():
    for text in ["naïve café — “quotes”", "tabs\tand\nnewlines", "emoji 🙂 and 中文", URDU]:
        assert tokenizer.decode(tokenizer.encode(text)) == text


def test_tokenizer_matches_transformers_when_available():
    try:
        from transformers import AutoTokenizer
        hf = AutoTokenizer.from_pretrained("gpt2", local_files_only=True)
    except Exception:
        pytest.skip("transformers has no cached 'gpt2' tokenizer on this machine")
    for text in ["The cat sat on the", URDU, "Tokenization is unbelievable", "  two  spaces"]:
        assert tokenizer.encode(text) == hf(text)["input_ids"]


def test_bpe_replay_ends_at_the_tokenizers_split():
    for word in [" unbelievable", "Tokenization", " sat"]:
        steps = tokenizer.bpe_replay(word)
        final = steps[-1]
        vocab = tokenizer.byte_vocab()
        assert [vocab[s] for s in final] == tokenizer.encode(word)
        assert all(len(a) == len(b) + 1 for a, b in zip(steps, steps[1:]))  # one merge per step


# -- extraction ----------------------------------------------------------------

def _softmax(x):
    z = x - x.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def test_probs_are_softmax_of_masked_scores(tiny_bundle):
    b = tiny_bundle
    assert np.allclose(_softmax(b["scores_masked"].astype(np.float64)), b["probs"], atol=1e-6)
    assert np.allclose(b["probs"].sum(-1), 1.0, atol=1e-5)
    upper = np.triu(np.ones((b.T, b.T), bool), 1)
    assert np.all(np.isneginf(b["scores_masked"][..., upper])) and np.all(b["probs"][..., upper] == 0)
    dh = b.config["n_embd"] // b.config["n_head"]
    assert np.allclose(b["scores_scaled"], b["scores_raw"] / np.sqrt(dh), atol=1e-6)


def test_logits_equal_the_models_own_output(tiny_bundle):
    """Re-run the same seeded model independently and compare with what the bundle saved."""
    import torch
    model = extract.load_model(extract.WeightsSpec("tiny"))
    with torch.no_grad():
        out = model(torch.tensor([tiny_bundle.ids]), output_attentions=True)
    assert np.allclose(out.logits[0].numpy(), tiny_bundle["logits"], atol=1e-5)
    assert np.allclose(torch.stack(out.attentions)[:, 0].numpy(), tiny_bundle["probs"], atol=1e-6)
    assert tiny_bundle.meta["weights"]["sha256"] == extract.weights_sha256(model)


def test_residual_stream_adds_up(tiny_bundle):
    b = tiny_bundle
    assert np.allclose(b["resid_pre"][0], b["wte_rows"] + b["wpe_rows"], atol=1e-6)
    assert np.allclose(b["resid_mid"], b["resid_pre"] + b["attn_out"], atol=1e-5)
    assert np.allclose(b["resid_post"], b["resid_mid"] + b["mlp_out"], atol=1e-5)
    assert np.allclose(b["resid_pre"][1:], b["resid_post"][:-1], atol=1e-6)
    merged = b["head_out"].transpose(0, 2, 1, 3).reshape(b["attn_out"].shape)
    assert merged.shape == b["attn_out"].shape


def test_bundle_records_provenance(tiny_bundle):
    m = tiny_bundle.meta
    assert m["prompt"] == "The cat sat on the" and m["token_ids"] == [464, 3797, 3332, 319, 262]
    assert m["weights"]["synthetic"] and len(m["weights"]["sha256"]) == 64
    assert {"torch", "transformers", "tokenizers", "safetensors", "numpy"} <= m["libraries"].keys()
    assert m["schema_version"] == bundle_io.SCHEMA_VERSION
    assert m["parameters"]["total"] == m["parameters"]["counted_by_torch"]
    assert len(m["generated"]) == extract.N_GENERATE
    files = sorted(p.name for p in tiny_bundle.path.iterdir())
    assert files == [bundle_io.META, bundle_io.TENSORS]   # safetensors + JSON, no pickle


def test_full_size_random_model_has_gpt2_small_parameter_count():
    counts = parameter_counts(GPT2_SMALL)
    assert counts["total"] == 124_439_808
    assert counts["wte"] == 38_597_376


# -- bundle cache, validation, atomic writes -------------------------------------------

def test_second_extraction_reuses_the_bundle(tiny_bundle):
    said = []
    again = extract.extract("The cat sat on the", "tiny", root=tiny_bundle.path.parent, log=said.append)
    assert again.path == tiny_bundle.path
    assert any("reusing bundle" in s for s in said)


def test_cache_key_changes_with_prompt_and_weights():
    k = bundle_io.cache_key("a", "w")
    assert k == bundle_io.cache_key("a", "w")
    assert len({k, bundle_io.cache_key("b", "w"), bundle_io.cache_key("a", "v")}) == 3


def test_a_bundle_older_extraction_code_made_is_extracted_again(tmp_path, monkeypatch):
    """A bundle holds what the extraction code made of the prompt (token texts, tensors): after
    that code changes (an upgrade), the old bundle is not reused, and unchanged code reuses it."""
    monkeypatch.setattr(extract, "producer_fingerprint", lambda: "old code")
    old = extract.extract("The cat sat on the", "tiny", root=tmp_path, log=lambda m: None)
    monkeypatch.setattr(extract, "producer_fingerprint", lambda: "new code")
    said = []
    new = extract.extract("The cat sat on the", "tiny", root=tmp_path, log=said.append)
    assert new.path != old.path and not any("reusing" in s for s in said)
    assert extract.extract("The cat sat on the", "tiny", root=tmp_path, log=lambda m: None).path == new.path


def test_the_extraction_fingerprint_ignores_comments(tmp_path, monkeypatch):
    here = Path(extract.__file__).parent
    for name in extract.PRODUCERS:
        (tmp_path / f"{name}.py").write_text((here / f"{name}.py").read_text(encoding="utf-8"), encoding="utf-8")
    fingerprint = extract.producer_fingerprint.__wrapped__
    monkeypatch.setattr(extract, "__file__", str(tmp_path / "extract.py"))
    before = fingerprint()
    with open(tmp_path / "tokenizer.py", "a", encoding="utf-8") as f:
        f.write("\n# a comment changes nothing\n")
    assert fingerprint() == before
    with open(tmp_path / "tokenizer.py", "a", encoding="utf-8") as f:
        f.write("CHANGED = 1\n")
    assert fingerprint() != before


def _copy(bundle, tmp_path) -> Path:
    dst = tmp_path / bundle.path.name
    shutil.copytree(bundle.path, dst)
    return dst


def test_corrupt_tensors_are_refused_with_advice(tiny_bundle, tmp_path):
    dst = _copy(tiny_bundle, tmp_path)
    data = bytearray((dst / bundle_io.TENSORS).read_bytes())
    data[-10] ^= 0xFF
    (dst / bundle_io.TENSORS).write_bytes(bytes(data))
    with pytest.raises(bundle_io.BundleError, match="checksum.*without --bundle"):
        bundle_io.load(dst)


def test_stale_schema_and_truncated_meta_are_refused(tiny_bundle, tmp_path):
    dst = _copy(tiny_bundle, tmp_path)
    meta = json.loads((dst / bundle_io.META).read_text())
    meta["schema_version"] = 0
    (dst / bundle_io.META).write_text(json.dumps(meta))
    with pytest.raises(bundle_io.BundleError, match="schema version"):
        bundle_io.load(dst)
    (dst / bundle_io.META).write_text('{"prompt": ')
    with pytest.raises(bundle_io.BundleError, match="corrupt"):
        bundle_io.load(dst)


def test_corrupt_cached_bundle_is_re_extracted(tiny_bundle, tmp_path):
    root = tmp_path / "root"
    first = extract.extract("The cat sat on the", "tiny", root=root, log=lambda m: None)
    (first.path / bundle_io.TENSORS).write_bytes(b"garbage")
    said = []
    again = extract.extract("The cat sat on the", "tiny", root=root, log=said.append)
    assert any("unusable" in s for s in said)
    assert np.array_equal(again["logits"], tiny_bundle["logits"])
    assert [p.name for p in root.iterdir()] == [first.path.name]   # no temp dirs left behind


def test_failed_write_keeps_the_good_bundle(tiny_bundle, tmp_path):
    dst = _copy(tiny_bundle, tmp_path)
    before = (dst / bundle_io.TENSORS).read_bytes()
    bad = {"x": object()}  # cannot be saved: the write fails half-way
    with pytest.raises(Exception):
        bundle_io.save(dst, bad, {})
    assert (dst / bundle_io.TENSORS).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [dst.name]


def test_saved_bundle_holds_exactly_the_schema(tiny_bundle):
    """Every tensor on disk is declared once in bundle.SCHEMA, with that shape and dtype."""
    from safetensors.numpy import load_file
    saved = load_file(str(tiny_bundle.path / bundle_io.TENSORS))
    shapes = bundle_io.expected_shapes(tiny_bundle.config, tiny_bundle.T, tiny_bundle.meta)
    assert saved.keys() == shapes.keys() and set(shapes) <= set(bundle_io.SCHEMA)
    for name in shapes:
        spec = bundle_io.SCHEMA[name]
        assert saved[name].shape == shapes[name], name
        assert saved[name].dtype == np.dtype(spec.dtype), name
    assert bundle_io.schema_problems(saved, tiny_bundle.meta) == []
    saved["extra"] = saved["q"]
    assert bundle_io.schema_problems(saved, tiny_bundle.meta) == ["has tensor 'extra', which is not in the schema"]


def test_cached_bundle_lookup_imports_no_torch(tiny_bundle):
    code = ("import sys; from onepass.data import extract; "
            f"b = extract.extract({tiny_bundle.prompt!r}, 'tiny', root={str(tiny_bundle.path.parent)!r}, log=print); "
            f"assert b.path.name == {tiny_bundle.path.name!r}; "
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "reusing bundle" in r.stdout and r.stdout.strip().endswith("[]")


# -- FLOPs ledger ------------------------------------------------------------------

def test_ledger_checkpoints_for_gpt2_small_and_five_tokens():
    led = forward_ledger(GPT2_SMALL, 5)
    assert led.after("embed") == 0
    assert led.after("positions") == 3_840
    assert led["L0.qkv"].flops == 17_694_720 and led["L0.out"].flops == 5_898_240
    assert led.attention_flops(0) == pytest.approx(23.7e6, rel=0.01)
    assert led.layer_flops(0) == pytest.approx(71e6, rel=0.01)
    assert led.after("L11.mlp_down") - led.after("positions") == pytest.approx(850e6, rel=0.01)
    assert led["unembed"].flops == 77_194_752
    assert led.total == pytest.approx(0.928e9, rel=0.01)
    assert [e.total for e in led.entries] == list(np.cumsum([e.flops for e in led.entries]))
    assert kv_cache_numbers_per_token(GPT2_SMALL) == 18_432


def test_ledger_scales_quadratically_only_in_the_grid():
    a, b = forward_ledger(GPT2_SMALL, 10), forward_ledger(GPT2_SMALL, 20)
    assert b["L0.qkv"].flops == 2 * a["L0.qkv"].flops
    assert b["L0.scores"].flops == 4 * a["L0.scores"].flops


# -- CLI ---------------------------------------------------------------------------

def run_cli(*args, timeout=300):
    return subprocess.run([sys.executable, str(ROOT / "render.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)


def test_unknown_chapter_lists_the_chapters():
    r = run_cli("--chapter", "99", "--weights", "tiny")
    assert r.returncode == 2
    assert "no chapter '99'" in r.stderr and "02 (One attention head)" in r.stderr


@pytest.mark.parametrize("prompt, message", [
    ("", "empty"), ("   ", "empty"), ("bad\x07bell", "control characters"),
    ("word " * 80, "at most"),
])
def test_bad_prompts_get_clear_errors(prompt, message):
    r = run_cli("--inspect", "--weights", "tiny", "--prompt", prompt)
    assert r.returncode == 2 and message in r.stderr
    assert "Traceback" not in r.stderr


def test_inspect_json_reports_tokens_top_tokens_and_ledger(tmp_path):
    r = run_cli("--inspect", "--json", "--weights", "tiny", "--prompt", "The cat sat on the")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [t["id"] for t in report["tokens"]] == [464, 3797, 3332, 319, 262]
    probs = [t["prob"] for t in report["top_next_tokens"]]
    assert probs == sorted(probs, reverse=True) and len(probs) == extract.TOP_K
    assert report["flops_total"] == report["flops"][-1]["total"]
    assert report["synthetic_weights"] is True


def test_list_names_chapter_02_scenes():
    r = run_cli("--list")
    assert r.returncode == 0 and "02" in r.stdout and "Scores" in r.stdout


def test_missing_real_weights_error_says_how_to_get_them(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    empty = tmp_path / "no-weights-here"
    empty.mkdir()
    with pytest.raises(extract.ExtractError, match="--weights random"):
        extract.load_model(extract.WeightsSpec(str(empty)))


@pytest.mark.render
def test_smoke_render_chapter_02_tiny(tmp_path):
    """The whole pipeline: extract (tiny), render every scene, join, captions, thumbnail. At draft
    (288p10, two thirds of low's CPU): the pipeline is the same at every quality; the default, low
    (480p15), is checked on a rendered scene in tests/test_narration.py."""
    r = run_cli("--chapter", "02", "--weights", "tiny", "--quality", "draft", "--out", str(tmp_path), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    [out] = tmp_path.glob("the-cat-sat-on-the-*/draft")     # <slug>-<hash of prompt and weights>
    mp4 = out / "ch02-one-attention-head.mp4"
    assert mp4.is_file() and (out / "ch02-one-attention-head.png").is_file()
    probe = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration:stream=width,height",
                                       "-of", "json", str(mp4)], capture_output=True, text=True).stdout)
    assert (probe["streams"][0]["width"], probe["streams"][0]["height"]) == (512, 288)
    # the lesson's 13 beats run about four minutes (issue 40: chapters may run longer); an empty or runaway
    # render falls outside
    assert 60 <= float(probe["format"]["duration"]) <= 360
    srt = (out / "ch02-one-attention-head.srt").read_text()
    assert "One attention head" in srt          # the title line, captioned
    assert not list(out.glob("*.part*"))
