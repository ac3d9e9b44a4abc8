"""A Llama-style pass (Llama, SmolLM2, Qwen3) read into the bundle's standard tensor names.

capture() runs the transformers model once with forward hooks on its real modules and, for what
is not a module (the rotation is a function call inside the attention), an attention function
registered with transformers' AttentionInterface: it sees q and k after the rotation and before
repeat_kv, and runs transformers' own eager attention. derive() redoes attention in numpy as
chapter 02 tells it (query head h reads key/value head h // group); cross_check() holds every
step against the model: RMSNorm, the q/k norm (Qwen3), the rotation with the model's own frequencies,
the softmax, the merged heads and the logits.
"""
from __future__ import annotations

import numpy as np

from onepass.data.arch.base.ops import causal_mask, softmax
from onepass.data.arch.base.spec import CaptureError, Shape

ATTENTION = "onepass_capture"     # the attention implementation capture() registers and runs


def rms(x: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm's divisor √(mean x² + ε) over the last axis: [..., d] -> [...]."""
    x = x.astype(np.float64)
    return np.sqrt((x * x).mean(-1) + eps)


def rotate_half_split(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """RoPE as transformers applies it: dimension i turns with dimension i + dh/2 by angle
    position · inv_freq[i]. x [..., T, dh], positions [T], inv_freq [dh/2] -> [..., T, dh]."""
    half = x.shape[-1] // 2
    angle = positions[:, None].astype(np.float64) * inv_freq[None, :].astype(np.float64)   # [T, dh/2]
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., :half].astype(np.float64), x[..., half:].astype(np.float64)
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def model_class(name: str):
    import transformers  # heavy: only when a bundle must be extracted
    return getattr(transformers, name)


def config_class(name: str):
    import transformers
    return getattr(transformers, name.replace("ForCausalLM", "Config"))


def synthetic_model(config: dict, hf_class: str, peaked_std: float | None = None, seed: int = 0):
    """The architecture with seeded random numbers; peaked_std as GPT-2's (the final norm's gain set so
    the logits spread like a trained model's)."""
    import torch
    cfg = config_class(hf_class)(**config)
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = model_class(hf_class)(cfg).eval()
    if peaked_std is not None:
        spread = cfg.initializer_range * cfg.hidden_size ** 0.5    # unit-rms norm output · init-std rows
        with torch.no_grad():
            model.model.norm.weight.fill_(peaked_std / spread)
    return model


def shape_config(model, shape: Shape) -> dict:
    """The bundle's config: GPT-2's key names for the common numbers (so every reader of a bundle
    reads them the same way) plus the components, and the model's own config for citation."""
    cfg = model.config
    return dict(n_layer=shape.n_layer, n_head=shape.n_head, n_embd=shape.n_embd, vocab_size=shape.vocab,
                n_positions=shape.n_positions, n_inner=shape.d_ff, norm_eps=float(cfg.rms_norm_eps),
                **shape.components())


def lens_logits(model, h):
    """Logits of residual rows h [N, d] through the final RMSNorm and the unembedding."""
    return model.lm_head(model.model.norm(h))


def _register():
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, eager_mask
    from transformers.models.llama.modeling_llama import eager_attention_forward

    def attention(module, query, key, value, attention_mask, **kwargs):
        # query [1, H, T, dh], key/value [1, KV, T, dh]: rotated, not yet repeated per group
        sink = getattr(module, "_onepass_sink", None)
        out, weights = eager_attention_forward(module, query, key, value, attention_mask, **kwargs)
        if sink is not None:
            sink(query, key, value, weights)
        return out, weights
    AttentionInterface.register(ATTENTION, attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(ATTENTION, eager_mask)


def capture(model, ids: list[int]) -> dict[str, np.ndarray]:
    """Run the model once; everything it computed, as numpy, per layer stacked to [L, ...]."""
    import torch
    _register()
    store: dict = {}

    def keep(name, x):
        x = x[0] if isinstance(x, tuple) else x
        store[name] = x.detach()[0].float().numpy()

    handles, attns = [], []
    for l, layer in enumerate(model.model.layers):
        attn = layer.self_attn
        hooks = {
            "resid_pre": (layer, "in"), "ln1_in": (layer.input_layernorm, "in"), "ln1": (layer.input_layernorm, "out"),
            "q_proj": (attn.q_norm if hasattr(attn, "q_norm") else attn.q_proj, "out"),
            "k_proj": (attn.k_norm if hasattr(attn, "k_norm") else attn.k_proj, "out"),
            "v_proj": (attn.v_proj, "out"), "merged": (attn.o_proj, "in"), "attn_out": (attn, "out"),
            "ln2_in": (layer.post_attention_layernorm, "in"), "ln2": (layer.post_attention_layernorm, "out"),
            "mlp_gate": (layer.mlp.gate_proj, "out"), "mlp_pre": (layer.mlp.up_proj, "out"),
            "mlp_hidden": (layer.mlp.down_proj, "in"), "mlp_out": (layer.mlp, "out"), "resid_post": (layer, "out"),
        }
        if hasattr(attn, "q_norm"):      # Qwen3: each head's q and k as they enter the q/k norm, [T, n, dh]
            hooks.update(q_prenorm=(attn.q_norm, "in"), k_prenorm=(attn.k_norm, "in"))
            store[f"q_norm_w.{l}"] = attn.q_norm.weight.detach().float().numpy()   # [dh]: stacked [L, dh]
            store[f"k_norm_w.{l}"] = attn.k_norm.weight.detach().float().numpy()
        for name, (module, side) in hooks.items():
            key = f"{name}.{l}"
            if side == "in":
                handles.append(module.register_forward_pre_hook(
                    lambda _m, args, kwargs, k=key: keep(k, args[0] if args else kwargs["hidden_states"]),
                    with_kwargs=True))
            else:
                handles.append(module.register_forward_hook(lambda _m, _a, out, k=key: keep(k, out)))

        def sink(q, k, v, w, l=l):
            store[f"q.{l}"], store[f"k.{l}"] = q.detach()[0].float().numpy(), k.detach()[0].float().numpy()
            store[f"v.{l}"], store[f"probs.{l}"] = v.detach()[0].float().numpy(), w.detach()[0].float().numpy()
        attn._onepass_sink = sink
        attns.append(attn)
        store[f"ln1_w.{l}"] = layer.input_layernorm.weight.detach()[None].float().numpy()   # [1, d]: stacked [L, 1, d]
    norm = model.model.norm
    handles.append(norm.register_forward_pre_hook(lambda _m, args: keep("ln_f_in", args[0])))
    handles.append(norm.register_forward_hook(lambda _m, _a, out: keep("ln_f", out)))
    before = model.config._attn_implementation
    model.config._attn_implementation = ATTENTION
    try:
        with torch.no_grad():
            out = model(torch.tensor([ids]), use_cache=False)
    finally:
        model.config._attn_implementation = before
        for h in handles:
            h.remove()
        for a in attns:
            del a._onepass_sink
    L = model.config.num_hidden_layers
    names = {n.rsplit(".", 1)[0] for n in store if n[-1].isdigit()}
    captured = {n: np.stack([store[f"{n}.{l}"] for l in range(L)]) for n in names}
    captured.update(ln_f_in=store["ln_f_in"], ln_f=store["ln_f"], logits=out.logits[0].float().numpy(),
                    wte=model.get_input_embeddings().weight.detach().float().numpy(),
                    unembed=model.get_output_embeddings().weight.detach().float().numpy(),
                    inv_freq=model.model.rotary_emb.inv_freq.detach().float().numpy(),
                    eps=np.float64(model.config.rms_norm_eps))
    return captured


def derive(c: dict[str, np.ndarray], ids: list[int], shape: Shape) -> dict[str, np.ndarray]:
    """The bundle's tensors from the captures: per-head q/k before and after the rotation, and the
    attention redone in numpy with each query head reading its group's key/value head."""
    L, T, _ = c["resid_pre"].shape
    H, KV, dh = shape.n_head, shape.kv_heads, shape.d_head
    eps = float(c["eps"])
    heads = lambda x, n: x.reshape(L, T, n, dh).transpose(0, 2, 1, 3)   # [L, T, n·dh] -> [L, n, T, dh]
    q_pre = heads(c["q_proj"], H)                                        # [L, H, T, dh] before the rotation
    k_pre = heads(c["k_proj"], KV)                                       # [L, KV, T, dh]
    # the q/k norm's input and gains (Qwen3): the hooks saw [L, T, n, dh]; the bundle keeps [L, n, T, dh]
    qk_norm = {} if "q_prenorm" not in c else {
        "q_prenorm": c["q_prenorm"].transpose(0, 2, 1, 3), "k_prenorm": c["k_prenorm"].transpose(0, 2, 1, 3),
        "q_norm_w": c["q_norm_w"], "k_norm_w": c["k_norm_w"]}               # [L, dh] each
    q, k, v = c["q"], c["k"], c["v"]                                     # [L, H|KV|KV, T, dh] the model's own
    k_of_head = k[:, [shape.kv_head_of(h) for h in range(H)]]            # [L, H, T, dh] each query head's keys
    v_of_head = v[:, [shape.kv_head_of(h) for h in range(H)]]
    scores_raw = q @ k_of_head.transpose(0, 1, 3, 2)                     # [L, H, T, T]
    scores_scaled = scores_raw / np.sqrt(dh)                             # float64
    scores_masked = causal_mask(scores_scaled)                           # [L, H, T, T] float32, future -inf
    probs = c["probs"]                                                   # [L, H, T, T] the model's softmax
    head_out = probs @ v_of_head                                         # [L, H, T, dh]
    return {
        "token_ids": np.array(ids, dtype=np.int64),                      # [T]
        "wte_rows": c["wte"][ids],                                       # [T, d]
        "resid_pre": c["resid_pre"],                                     # [L, T, d]
        "rms1": rms(c["ln1_in"], eps).astype(np.float32), "ln1": c["ln1"],   # [L, T], [L, T, d]
        "q_prerot": q_pre, "k_prerot": k_pre, "q": q, "k": k, "v": v,
        "rope_inv_freq": c["inv_freq"].astype(np.float32),               # [dh/2] the model's own speeds
        "kv_head": np.array([shape.kv_head_of(h) for h in range(H)], dtype=np.int64),   # [H]
        "scores_raw": scores_raw, "scores_scaled": scores_scaled, "scores_masked": scores_masked,
        "probs": probs, "head_out": head_out,
        "attn_out": c["attn_out"],                                       # [L, T, d]
        "resid_mid": c["resid_pre"] + c["attn_out"],                     # [L, T, d]
        "rms2": rms(c["ln2_in"], eps).astype(np.float32), "ln2": c["ln2"],
        "mlp_gate": c["mlp_gate"], "mlp_pre": c["mlp_pre"], "mlp_hidden": c["mlp_hidden"],   # [L, T, dff]
        "mlp_out": c["mlp_out"], "resid_post": c["resid_post"],          # [L, T, d]
        "rms_f": rms(c["ln_f_in"], eps).astype(np.float32), "ln_f": c["ln_f"], "logits": c["logits"],
        **qk_norm,
    }


def cross_check(t: dict[str, np.ndarray], c: dict[str, np.ndarray]) -> dict[str, float]:
    """Our derivation against the model's own numbers; raises CaptureError past the tolerances."""
    L, H, T, dh = t["head_out"].shape
    positions = np.arange(T)
    silu = lambda x: x / (1.0 + np.exp(-x.astype(np.float64)))
    rel = lambda a, b: float(np.abs(a - b).max() / max(1e-12, float(np.abs(b).max())))
    checks = {
        "probs_vs_softmax_masked": float(np.abs(softmax(t["scores_masked"]) - t["probs"]).max()),
        # q and k turned by the model's own frequencies == what the attention received
        "rope_q_vs_model": rel(rotate_half_split(t["q_prerot"], positions, t["rope_inv_freq"]), t["q"]),
        "rope_k_vs_model": rel(rotate_half_split(t["k_prerot"], positions, t["rope_inv_freq"]), t["k"]),
        # RMSNorm: x / rms times its gain == the norm's output
        "rms1_vs_model": rel(c["ln1_in"] / t["rms1"][..., None] * c["ln1_w"], t["ln1"]),
        "head_out_vs_model": rel(t["head_out"].transpose(0, 2, 1, 3).reshape(L, T, H * dh), c["merged"]),
        "swiglu_vs_model": rel(silu(t["mlp_gate"]) * t["mlp_pre"], t["mlp_hidden"]),
        "logits_vs_model": rel(t["ln_f"] @ c["unembed"].T, t["logits"]),
        "embed_vs_model": float(np.abs(t["wte_rows"] - t["resid_pre"][0]).max()),
    }
    limits = {"probs_vs_softmax_masked": 1e-5, "rope_q_vs_model": 1e-5, "rope_k_vs_model": 1e-5,
              "rms1_vs_model": 1e-5, "head_out_vs_model": 1e-5, "swiglu_vs_model": 1e-5,
              "logits_vs_model": 1e-5, "embed_vs_model": 1e-6}
    if "q_prenorm" in t:     # the q/k norm: each head's row / its rms times the gain == what the turn received
        for x in "qk":
            pre = t[f"{x}_prenorm"]                                     # [L, n, T, dh]
            normed = pre / rms(pre, float(c["eps"]))[..., None] * t[f"{x}_norm_w"][:, None, None, :]
            checks[f"qk_norm_{x}_vs_model"] = rel(normed, t[f"{x}_prerot"])
            limits[f"qk_norm_{x}_vs_model"] = 1e-5
    for name, err in checks.items():
        if not err <= limits[name]:
            raise CaptureError(f"captured tensors disagree with the model ({name}: max error {err:.3g}); "
                               "this is a bug in onepass's hooks, please report it")
    return checks
