"""GPT-2's pass read into the bundle's standard tensor names.

capture() runs GPT2LMHeadModel (eager attention) once with forward hooks on its real modules;
derive() redoes the attention arithmetic in numpy (q, k, v -> scores -> mask -> probs -> head_out);
cross_check() holds that against the model. torch and transformers are imported inside the
functions, so a cached bundle never loads them.
"""
from __future__ import annotations

import numpy as np

from onepass.data.arch.base.ops import causal_mask, softmax
from onepass.data.arch.base.spec import CaptureError, Shape

RANDOM_SEED = 0


def synthetic_model(config: dict, peaked_std: float | None = None, seed: int = RANDOM_SEED):
    """GPT2LMHeadModel of seeded random numbers in `config`'s shape (GPT2Config kwargs).

    peaked_std: the final LayerNorm's gain set so the logits' spread is this (random init spreads them
    ~0.55 at GPT-2's width: every token ~1/V), making predictions as peaked as a trained model's. The
    logit lens reads through the same LayerNorm.
    """
    import torch  # heavy (torch + transformers take seconds): only when a bundle must be extracted
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(**config)
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(cfg).eval()
    if peaked_std is not None:
        # logit = ln_f(h) . wte[v]: unit-variance ln_f output times init-std rows, summed over n_embd
        spread = cfg.initializer_range * cfg.n_embd ** 0.5
        with torch.no_grad():
            model.transformer.ln_f.weight.fill_(peaked_std / spread)
    return model


def load(source: str, local_only: bool):
    """GPT2LMHeadModel from a hub id or folder, eager attention (needed for attention outputs);
    use_safetensors: never a pickle (pytorch_model.bin), whatever the folder or cache holds."""
    from transformers import GPT2LMHeadModel  # heavy (seconds): only when a bundle must be extracted
    return GPT2LMHeadModel.from_pretrained(source, attn_implementation="eager", use_safetensors=True,
                                           local_files_only=local_only).eval()


def shape_config(model) -> dict:
    """The bundle's config: GPT2Config's own keys (GPT-2's bundles keep exactly these)."""
    cfg = model.config
    return {k: getattr(cfg, k) for k in ("n_layer", "n_head", "n_embd", "vocab_size", "n_positions", "n_inner",
                                         "layer_norm_epsilon", "activation_function")}


def lens_logits(model, h):
    """Logits of residual rows h [N, d] read through the final LayerNorm and the tied unembedding,
    exactly like the real output."""
    return model.lm_head(model.transformer.ln_f(h))


# What capture() hooks: name -> (module path inside a block, "in" or "out"). Most are saved
# as they are (see bundle.SCHEMA); "qkv" feeds derive() and "merged" is only compared.
BLOCK_HOOKS = {
    "resid_pre": ("", "in"), "ln1": ("ln_1", "out"), "qkv": ("attn.c_attn", "out"),
    "merged": ("attn.c_proj", "in"), "attn_out": ("attn", "out"), "ln2": ("ln_2", "out"),
    "mlp_pre": ("mlp.c_fc", "out"), "mlp_hidden": ("mlp.act", "out"), "mlp_out": ("mlp", "out"),
    "resid_post": ("", "out"),
}


def capture(model, ids: list[int]) -> dict[str, np.ndarray]:
    """Run the model once with forward hooks on its real modules; everything it computed, as numpy.

    Per-layer captures are stacked to [L, T, ...] (batch dimension dropped); besides them:
    ln_f [T, d], logits [T, V], attentions [L, H, T, T] (the model's own softmax),
    wte [V, d] and wpe [P, d] (the embedding tables).
    """
    import torch  # heavy (~1 s): only needed when a bundle is actually extracted

    store: dict = {}

    def keep(name, output):
        out = output[0] if isinstance(output, tuple) else output
        store[name] = out.detach()[0].float().numpy()

    handles = []
    for l, block in enumerate(model.transformer.h):
        for name, (path, side) in BLOCK_HOOKS.items():
            module = block.get_submodule(path)
            if side == "in":
                hook = module.register_forward_pre_hook(lambda _m, args, n=f"{name}.{l}": keep(n, args[0]))
            else:
                hook = module.register_forward_hook(lambda _m, _args, out, n=f"{name}.{l}": keep(n, out))
            handles.append(hook)
    handles.append(model.transformer.ln_f.register_forward_hook(lambda _m, _a, out: keep("ln_f", out)))
    try:
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
    finally:
        for h in handles:
            h.remove()

    L = model.config.n_layer
    captured = {name: np.stack([store[f"{name}.{l}"] for l in range(L)]) for name in BLOCK_HOOKS}
    captured.update(
        ln_f=store["ln_f"],
        logits=out.logits[0].float().numpy(),
        attentions=torch.stack(out.attentions)[:, 0].float().numpy(),
        wte=model.transformer.wte.weight.detach().float().numpy(),
        wpe=model.transformer.wpe.weight.detach().float().numpy(),
    )
    return captured


def derive(c: dict[str, np.ndarray], ids: list[int], shape: Shape) -> dict[str, np.ndarray]:
    """The bundle's tensors from the captures: attention redone in numpy, as chapter 02 tells it.

    probs are the model's own attention weights; the softmax of our masked scores is only
    compared with them (cross_check), so what the film shows is exactly what the model used.
    """
    L, T, d3 = c["qkv"].shape                                   # qkv: [L, T, 3d]
    d = d3 // 3
    n_head = shape.n_head
    dh = d // n_head
    heads = lambda x: x.reshape(L, T, n_head, dh).transpose(0, 2, 1, 3)  # [L, T, d] -> [L, H, T, dh]
    q, k, v = (heads(c["qkv"][..., i * d:(i + 1) * d]) for i in range(3))  # each [L, H, T, dh]
    scores_raw = q @ k.transpose(0, 1, 3, 2)                     # [L, H, T, T]
    scores_scaled = scores_raw / np.sqrt(dh)                     # [L, H, T, T] (float64: numpy promotes)
    scores_masked = causal_mask(scores_scaled)                   # [L, H, T, T] float32, future -inf
    probs = c["attentions"]                                      # [L, H, T, T] the model's softmax
    head_out = probs @ v                                         # [L, H, T, dh]
    return {
        "token_ids": np.array(ids, dtype=np.int64),              # [T]
        "wte_rows": c["wte"][ids], "wpe_rows": c["wpe"][:T],     # [T, d] each
        "wpe_table": c["wpe"],                                   # [P, d]
        "resid_pre": c["resid_pre"], "ln1": c["ln1"],            # [L, T, d]
        "q": q, "k": k, "v": v,
        "scores_raw": scores_raw, "scores_scaled": scores_scaled, "scores_masked": scores_masked,
        "probs": probs, "head_out": head_out,
        "attn_out": c["attn_out"],                               # [L, T, d]
        "resid_mid": c["resid_pre"] + c["attn_out"],             # [L, T, d]
        "ln2": c["ln2"], "mlp_pre": c["mlp_pre"], "mlp_hidden": c["mlp_hidden"],  # [L, T, d|dff|dff]
        "mlp_out": c["mlp_out"], "resid_post": c["resid_post"],  # [L, T, d]
        "ln_f": c["ln_f"], "logits": c["logits"],                # [T, d], [T, V]
    }


def cross_check(t: dict[str, np.ndarray], c: dict[str, np.ndarray]) -> dict[str, float]:
    """Our derivation against the model's own numbers; raises CaptureError past the tolerances."""
    L, H, T, dh = t["head_out"].shape
    checks = {
        # saved probabilities == softmax of saved masked scores
        "probs_vs_softmax_masked": float(np.abs(softmax(t["scores_masked"]) - t["probs"]).max()),
        # our per-head outputs, merged, == what the model fed its output projection
        "head_out_vs_model": float(np.abs(t["head_out"].transpose(0, 2, 1, 3).reshape(L, T, H * dh)
                                          - c["merged"]).max()),
        # logits rebuilt from the captured final LayerNorm and the tied table == the model's logits
        "logits_vs_model": float(np.abs(t["ln_f"] @ c["wte"].T - t["logits"]).max()),
        # the embedding stage: wte + wpe == the first block's input
        "embed_vs_model": float(np.abs(t["wte_rows"] + t["wpe_rows"] - t["resid_pre"][0]).max()),
    }
    # the tiny random model has logits of order 1; real GPT-2's are ~100, so compare relatively
    scale = max(1.0, float(np.abs(t["logits"]).max()))
    limits = {"probs_vs_softmax_masked": 1e-5, "head_out_vs_model": 1e-4,
              "logits_vs_model": 1e-5 * scale, "embed_vs_model": 1e-6}
    for name, err in checks.items():
        if not err <= limits[name]:
            raise CaptureError(f"captured tensors disagree with the model ({name}: max error {err:.3g}); "
                               "this is a bug in onepass's hooks, please report it")
    return checks


