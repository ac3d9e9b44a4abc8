"""Run GPT-2 once on a prompt, capture every intermediate tensor, write the bundle.

Three steps: capture() runs GPT2LMHeadModel (eager attention) once with forward hooks on
its real modules; derive() redoes the attention arithmetic in numpy (q, k, v -> scores ->
mask -> probs -> head_out); cross_check() holds that against the model: the saved
probabilities must equal the softmax of the saved masked scores, the merged head outputs
what the model fed its output projection, and the logits rebuilt from the captured final
LayerNorm the model's logits. What a bundle holds is declared once, in bundle.SCHEMA.

torch and transformers are imported only inside the functions that run the model, so
returning a cached bundle stays fast and light.
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.metadata as md
import json
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import numpy as np

from onepass.data.errors import OnepassError
from onepass.data import bundle as bundle_io
from onepass.data import hub
from onepass.data import models
from onepass.data import tokenizer
from onepass.data.flops import Shape, parameter_counts

WEIGHTS_ENV = "ONEPASS_GPT2_WEIGHTS"   # a local GPT-2 directory tests and users may point at
MAX_TOKENS = 64                       # the scenes stay legible up to here
TOP_K = 10                            # candidates kept per row / per generated step
N_GENERATE = 4                        # tokens generated for chapter 06
SAMPLE_SEED = 1234                    # seed of the sampled pick in chapter 04
RANDOM_SEED = 0                       # seed of --weights random (and tiny, peaked)
# --weights peaked: the random model with its final LayerNorm's gain raised so the unembedding's
# logits spread like a trained model's (std ~11 at any width): top-1 of 20-95%, a top-p 0.9 set of
# a few tokens, a logit lens that settles over the last layers. Still random numbers: synthetic.
PEAKED_LOGIT_STD = 11.0
# the token of interest chapter 04 ranks when --watch is not given: the seeds' example
DEFAULT_WATCH = {"The cat sat on the": " mat"}
COSINE_PAIRS = [("king", "queen"), ("king", "banana"), ("Monday", "Tuesday"), ("Monday", "banana")]
# a tiny GPT-2 for tests and quick previews (real vocabulary so the tokenizer still fits)
TINY_CONFIG = dict(n_layer=2, n_head=4, n_embd=64, n_positions=128)


class ExtractError(OnepassError, RuntimeError):
    """Extraction cannot go on; the message says what to do."""


# --weights made here from seeded random numbers
SYNTHETIC = ("random", "peaked", "tiny", "tiny-peaked", "mini", "mini-peaked")


def synthetic_config(name: str, model: str = models.DEFAULT) -> dict:
    """The architecture synthetic weights `name` get for `model`: 'random'/'peaked' the model's own,
    'mini'/'mini-peaked' its layers and heads at a small width (models.Model.mini_config),
    'tiny'/'tiny-peaked' TINY_CONFIG whatever the model (2 layers, 4 heads: the fast test model)."""
    if name.startswith("tiny"):
        return dict(TINY_CONFIG)
    m = models.get(model)
    return m.mini_config() if name.startswith("mini") else m.config()


def synthetic_model(name: str, config: dict | None = None, model: str = models.DEFAULT):
    """GPT2LMHeadModel of seeded random numbers in synthetic_config(name, model)'s shape;
    `config` overrides the shape.

    'peaked' is 'random' with one change: the final LayerNorm's gain set so the logits' spread is
    PEAKED_LOGIT_STD (random init spreads them ~0.55 at GPT-2's width: every token ~1/V), making
    predictions as peaked as a trained model's. The logit lens reads through the same LayerNorm.
    """
    import torch  # heavy (torch + transformers take seconds): only when a bundle must be extracted
    from transformers import GPT2Config, GPT2LMHeadModel
    if name not in SYNTHETIC:
        raise ExtractError(f"unknown synthetic weights {name!r}; choose one of {', '.join(SYNTHETIC)}")
    cfg = GPT2Config(**(config if config is not None else synthetic_config(name, model)))
    cfg._attn_implementation = "eager"
    torch.manual_seed(RANDOM_SEED)
    model = GPT2LMHeadModel(cfg).eval()
    if name.endswith("peaked"):
        # logit = ln_f(h) . wte[v]: unit-variance ln_f output times init-std rows, summed over n_embd
        spread = cfg.initializer_range * cfg.n_embd ** 0.5
        with torch.no_grad():
            model.transformer.ln_f.weight.fill_(PEAKED_LOGIT_STD / spread)
    return model


@dataclass(frozen=True)
class WeightsSpec:
    """What --weights named: a hub id ('gpt2', 'gpt2-medium' ...), a directory, or synthetic weights
    ('random', 'peaked', 'mini', 'tiny' ...) in `model`'s architecture (see synthetic_config)."""
    name: str
    model: str = models.DEFAULT

    @property
    def synthetic(self) -> bool:
        return self.name in SYNTHETIC

    def identity(self) -> str:
        """A string that changes whenever the weights could change (part of the cache key)."""
        if self.synthetic and not self.name.startswith("tiny") and (self.name.startswith("mini")
                                                                     or self.model != models.DEFAULT):
            shape = json.dumps(synthetic_config(self.name, self.model), sort_keys=True)
            peaked = f":logit_std={PEAKED_LOGIT_STD}" if self.name.endswith("peaked") else ""
            return f"{self.name}:{self.model}:{shape}:seed={RANDOM_SEED}{peaked}"
        # GPT-2 small's and the tiny model's identities as they always were (their cached bundles stay valid)
        if self.name == "random":
            return f"random:seed={RANDOM_SEED}"
        if self.name == "tiny":
            return f"tiny:seed={RANDOM_SEED}:{json.dumps(TINY_CONFIG, sort_keys=True)}"
        if self.name.endswith("peaked"):
            shape = json.dumps(TINY_CONFIG, sort_keys=True) if self.name.startswith("tiny") else "gpt2-small"
            return f"{self.name}:{shape}:seed={RANDOM_SEED}:logit_std={PEAKED_LOGIT_STD}"
        path = Path(self.name).expanduser()
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix in (".safetensors", ".bin", ".json"))
            stamp = ";".join(f"{p.name}:{p.stat().st_size}:{int(p.stat().st_mtime)}" for p in files)
            return f"dir:{path.resolve()}:{stamp}"
        return f"hub:{self.name}"


def dir_config(path: str | Path) -> dict | None:
    """The config.json of a weights directory (its architecture), or None when it has none readable."""
    try:
        return json.loads((Path(path).expanduser() / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def weights_model(weights: str) -> str | None:
    """The family member real weights are (a hub id of onepass.data.models, or a directory whose config.json has
    a family member's architecture); None for synthetic weights, 'auto', or any other shape."""
    if weights in models.FAMILY:
        return weights
    if weights in SYNTHETIC or weights == "auto":
        return None
    config = dir_config(weights) if Path(weights).expanduser().is_dir() else None
    return models.member_name(config)


def model_conflict(weights: str, model: str | None, weights_flag: str = "--weights",
                   model_flag: str = "--model") -> str | None:
    """Why `weights` and `model` cannot both hold (one line, naming the options as the caller's user
    wrote them), or None: real weights are one model, and a model that names another is refused
    rather than silently ignored."""
    if model is None or weights in SYNTHETIC or weights == "auto":
        return None
    if weights in models.FAMILY:
        if weights != model:
            return (f"{weights} loads the hub's {weights}, but {model_flag} says {model}; pass "
                    f"{weights_flag} {model} (or auto, or random), or leave out {model_flag}")
        return None
    if Path(weights).expanduser().is_dir():
        config = dir_config(weights)
        if config is None:
            return None          # extraction says what is wrong with the folder
        found = models.family_of(config)
        if found is None or found.name != model:
            what = found.name if found else (f"a GPT-2-shaped model outside the family ({config.get('n_layer')} "
                                             f"layers, {config.get('n_embd')} wide)")
            return f"the weights in {weights} are {what}, but {model_flag} says {model}; leave out {model_flag}"
    return None


def effective_model(weights: str, model: str | None) -> str:
    """The family member a render explains: `model` when given, else the weights' own (weights_model),
    else GPT-2 small."""
    return model or weights_model(weights) or models.DEFAULT


def find_real_weights(model: str = models.DEFAULT) -> str | None:
    """Real weights of `model` already on this machine: $ONEPASS_GPT2_WEIGHTS (when its config.json is
    that model, or unreadable and the model is GPT-2 small), or the hub's cache (hub id = model). No request."""
    env = os.environ.get(WEIGHTS_ENV)
    if env and Path(env).expanduser().is_dir():
        config = dir_config(env)
        if (models.member_name(config) == model if config is not None
                else model == models.DEFAULT):
            return env
    if hub.cached(model) is not None:         # model.safetensors only: never a pickle (.bin)
        return model
    return None


def resolve_weights(name: str, log=print, model: str = models.DEFAULT) -> str:
    """'auto' -> `model`'s real weights: on this machine (find_real_weights), else downloaded once
    from the hub (data/hub.py), else 'random' (that model's architecture) with a warning saying why.
    extract() logs which real weights it uses (weights_source)."""
    if name != "auto":
        return name
    found = find_real_weights(model)
    if found:
        return found
    why = hub.fetch(model, log)
    if why is None and hub.cached(model) is not None:
        return model
    log(f"no real {model} weights on this machine and {why or 'the download left no model.safetensors'}: "
        f"rendering with RANDOM weights ({model}'s exact shapes, probabilities are noise; every frame says so). "
        f"For real predictions run again with internet (or HF_ENDPOINT set to a mirror), pass "
        f"--weights {model} where the hub answers, or --weights DIR / {WEIGHTS_ENV}=DIR with a copied GPT-2 folder.")
    return "random"


def weights_source(weights: str, resolved: str) -> str | None:
    """One line for the log: which real weights a run uses and why (None for synthetic weights)."""
    if resolved in SYNTHETIC:
        return None
    why = ("downloaded now" if resolved in hub.downloaded else "found on this machine") if weights == "auto" \
        else "as --weights says"
    if Path(resolved).expanduser().is_dir():
        return f"weights: {resolved} ({why})"
    path = hub.cached(resolved)
    if path is None:
        return f"weights: {resolved} from the hub {hub.endpoint()} ({why})"
    return f"weights: {resolved} from the Hugging Face cache, revision {path.parent.name} ({why})"


def validate_prompt(prompt: str) -> list[int]:
    """Token ids of the prompt, or a clear error for prompts the film cannot show."""
    if not prompt or not prompt.strip():
        raise ExtractError("the prompt is empty: pass some text, e.g. --prompt \"The cat sat on the\"")
    # bytes that were not UTF-8 reach Python's argv as U+DC80..U+DCFF (surrogateescape)
    undecodable = [i for i, c in enumerate(prompt) if 0xDC80 <= ord(c) <= 0xDCFF]
    if undecodable:
        i = undecodable[0]
        raise ExtractError(f"the prompt is not valid UTF-8: byte 0x{ord(prompt[i]) - 0xDC00:02X} (character {i + 1}) "
                           "is not UTF-8; set your terminal or file to UTF-8 and type the prompt again")
    surrogates = [c for c in prompt if 0xD800 <= ord(c) <= 0xDFFF]
    if surrogates:
        raise ExtractError(f"the prompt contains a lone surrogate (U+{ord(surrogates[0]):04X}), which is not text; "
                           "pass the prompt as UTF-8 text")
    # C0 controls (but tab and newline), DEL and the C1 controls: nothing a screen or a caption can show
    bad = bundle_io.control_characters(prompt)
    if bad:
        listed = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise ExtractError(f"the prompt contains control characters ({listed}); remove them and try again")
    ids = tokenizer.encode(prompt)
    if len(ids) > MAX_TOKENS:
        raise ExtractError(f"the prompt is {len(ids)} tokens long; onepass shows at most {MAX_TOKENS} "
                           "(shorten it: every token becomes a row and a column on screen)")
    return ids


def watch_token(prompt: str, text: str | None = None) -> dict | None:
    """Chapter 04's token of interest: `text` (--watch; 'none' = off), else
    DEFAULT_WATCH[prompt], else None.

    It must be exactly one GPT-2 token; mind the leading space (" mat", not "mat").
    Recorded in the bundle's meta["watch"] (and its cache key), so a video can cite it.
    """
    if text is None:
        text = DEFAULT_WATCH.get(prompt)
    if not text or text.strip().lower() == "none":
        return None
    ids = tokenizer.encode(text)
    if len(ids) != 1:
        raise ExtractError(f"the token to watch, {text!r}, is {len(ids)} GPT-2 tokens {ids}; name a single token "
                           "(usually a word with its leading space, e.g. \" mat\"), or 'none'")
    return {"text": text, "id": ids[0]}


def load_model(spec: WeightsSpec):
    """GPT2LMHeadModel with eager attention (needed for attention outputs)."""
    from transformers import GPT2LMHeadModel  # heavy (seconds): only when a bundle must be extracted

    if spec.synthetic:
        return synthetic_model(spec.name, model=spec.model)
    source = os.path.expanduser(spec.name)
    hub = spec.name if spec.name in models.FAMILY else models.DEFAULT
    how_to = (f"Real GPT-2 weights were not found for {spec.name!r}. Either download them once on a "
              "machine with internet (python -c \"from transformers import GPT2LMHeadModel; "
              f"GPT2LMHeadModel.from_pretrained('{hub}')\"), or pass a local directory with "
              f"--weights PATH (or set {WEIGHTS_ENV}), or render with --weights random "
              "(GPT-2's exact shapes with random numbers; probabilities are then noise).")
    if os.path.isdir(source):
        found = sorted(p.name for p in Path(source).iterdir())
        if not any(n.endswith(".safetensors") for n in found):
            pickles = [n for n in found if n.endswith((".bin", ".pt", ".pth", ".ckpt", ".pkl"))]
            if pickles:
                raise ExtractError(f"the weights in {source} are {pickles[0]}, a pickle (loading one can run any code "
                                   "it holds): onepass reads weights only from model.safetensors; save them as "
                                   "safetensors with a tool you trust, or use --weights random")
    from safetensors import SafetensorError
    for local_only in (True, False):
        if not local_only and (os.environ.get("HF_HUB_OFFLINE") == "1" or os.path.isdir(source)):
            break
        try:
            # use_safetensors: never a pickle (pytorch_model.bin), whatever the folder or cache holds
            return GPT2LMHeadModel.from_pretrained(source, attn_implementation="eager", use_safetensors=True,
                                                   local_files_only=local_only).eval()
        except SafetensorError as exc:      # a truncated or damaged file
            raise ExtractError(f"the weights in {source} cannot be read ({str(exc).splitlines()[0][:200]}): the "
                               "file is truncated or damaged; copy it again, or use --weights random") from None
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            if os.path.isdir(source) and any(Path(source).glob("*.safetensors")):
                raise ExtractError(f"the weights in {source} cannot be read ({str(exc).splitlines()[0][:200]}): "
                                   "copy them again, or use --weights random") from None
            last = exc
    raise ExtractError(f"{how_to}\n(detail: {str(last).splitlines()[0]})")


def weights_meta(spec: WeightsSpec, model, steps=None) -> dict:
    """meta["weights"]: the spec, its identity, the sha256 of every parameter, the seed of synthetic
    weights and, for weights from the hub's cache, the hub id, revision and model.safetensors' sha256."""
    if steps is not None:
        steps.step("hashing the weights")
    meta = {"spec": spec.name, "identity": spec.identity(), "synthetic": spec.synthetic,
            "sha256": weights_sha256(model), "seed": RANDOM_SEED if spec.synthetic else None}
    if not spec.synthetic and not Path(spec.name).expanduser().is_dir():
        meta["hub"] = hub.citation(spec.name)
    return meta


def weights_sha256(model) -> str:
    """Hash of every parameter tensor, in name order: cites exactly which weights ran."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        # the tensor's own memory, read in place (no copy: GPT-2 XL's weights are 6 GB)
        h.update(memoryview(tensor.detach().cpu().contiguous().numpy()).cast("B"))
    return h.hexdigest()


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


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def derive(c: dict[str, np.ndarray], ids: list[int], n_head: int) -> dict[str, np.ndarray]:
    """The bundle's tensors from the captures: attention redone in numpy, as chapter 02 tells it.

    probs are the model's own attention weights; the softmax of our masked scores is only
    compared with them (cross_check), so what the film shows is exactly what the model used.
    """
    L, T, d3 = c["qkv"].shape                                   # qkv: [L, T, 3d]
    d = d3 // 3
    dh = d // n_head
    heads = lambda x: x.reshape(L, T, n_head, dh).transpose(0, 2, 1, 3)  # [L, T, d] -> [L, H, T, dh]
    q, k, v = (heads(c["qkv"][..., i * d:(i + 1) * d]) for i in range(3))  # each [L, H, T, dh]
    scores_raw = q @ k.transpose(0, 1, 3, 2)                     # [L, H, T, T]
    scores_scaled = scores_raw / np.sqrt(dh)                     # [L, H, T, T] (float64: numpy promotes)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)           # [T, T] True above the diagonal
    scores_masked = np.where(future, -np.inf, scores_scaled).astype(np.float32)  # [L, H, T, T]
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
    """Our derivation against the model's own numbers; raises ExtractError past the tolerances."""
    L, H, T, dh = t["head_out"].shape
    checks = {
        # saved probabilities == softmax of saved masked scores
        "probs_vs_softmax_masked": float(np.abs(_softmax(t["scores_masked"]) - t["probs"]).max()),
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
            raise ExtractError(f"captured tensors disagree with the model ({name}: max error {err:.3g}); "
                               "this is a bug in onepass's hooks, please report it")
    return checks


def run_forward(model, ids: list[int]) -> tuple[dict[str, np.ndarray], dict]:
    """One forward pass: capture (hooks), derive (numpy), cross-check; returns (tensors, checks)."""
    captured = capture(model, ids)
    tensors = derive(captured, ids, model.config.n_head)
    return tensors, cross_check(tensors, captured)


def logit_lens(model, resid_post: np.ndarray, top_k: int = TOP_K) -> tuple[np.ndarray, np.ndarray]:
    """Top next-token guesses for the last position read off after every layer.

    Each layer's residual (last row) goes through the final LayerNorm and the tied
    unembedding, exactly like the real output. Returns ids and probs, [L, top_k].
    """
    import torch  # heavy: only when a bundle is extracted
    with torch.no_grad():
        h = torch.from_numpy(resid_post[:, -1, :])                     # [L, d]
        logits = model.lm_head(model.transformer.ln_f(h)).double()      # [L, V]
        probs = torch.softmax(logits, dim=-1)
        top = torch.topk(probs, top_k, dim=-1)
    return top.indices.numpy().astype(np.int64), top.values.float().numpy()


def generate(model, ids: list[int], steps: int, top_k: int = TOP_K, on_token=lambda i: None):
    """Greedy continuation, one full forward pass per step (as chapter 06 tells it); on_token(i)
    after each."""
    import torch  # heavy: only when a bundle is extracted
    context = list(ids)
    topk_ids, topk_probs, records = [], [], []
    with torch.no_grad():
        for _ in range(steps):
            logits = model(torch.tensor([context]), use_cache=False).logits[0, -1].double()
            probs = torch.softmax(logits, -1)
            top = torch.topk(probs, top_k)
            topk_ids.append(top.indices.numpy())
            topk_probs.append(top.values.float().numpy())
            pick = int(top.indices[0])
            records.append({"context_tokens": len(context), "id": pick,
                            "text": tokenizer.decode([pick]), "prob": float(top.values[0])})
            context.append(pick)
            on_token(len(records) - 1)
            if len(context) >= model.config.n_positions:
                break
    return records, np.array(topk_ids, dtype=np.int64), np.array(topk_probs, dtype=np.float32)


def cosine_pairs(model) -> list[dict]:
    """Cosine similarity of token-embedding rows for word pairs (first token of ' word')."""
    wte = model.transformer.wte.weight.detach().double().numpy()
    rows = []
    for a, b in COSINE_PAIRS:
        ia, ib = tokenizer.encode(" " + a)[0], tokenizer.encode(" " + b)[0]
        va, vb = wte[ia], wte[ib]
        cos = float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))
        rows.append({"a": a, "b": b, "id_a": ia, "id_b": ib, "cosine": cos})
    return rows


def library_versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for pkg in ("torch", "transformers", "tokenizers", "safetensors", "numpy", "manim"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    return out


# The modules whose output a bundle holds (tensors, token texts, counts, the format): a change to
# one of them as a syntax tree (comments and formatting do not count) makes new cache keys, so a
# bundle older code made is extracted again rather than shown with what that code got wrong.
PRODUCERS = ("extract", "tokenizer", "flops", "bundle", "models")


@lru_cache(maxsize=1)
def producer_fingerprint() -> str:
    here = Path(__file__).resolve().parent
    trees = [ast.dump(ast.parse((here / f"{name}.py").read_text(encoding="utf-8"))) for name in PRODUCERS]
    return hashlib.sha256("\n".join(trees).encode("utf-8")).hexdigest()[:16]


def extract(prompt: str, weights: str = "gpt2", root: Path | None = None,
            force: bool = False, log=print, watch: str | None = None,
            model: str | None = None) -> bundle_io.Bundle:
    """Bundle for (prompt, weights, model, watch token): reused from the cache when present, else extracted.

    model: the family member (onepass.data.models) explained: the architecture synthetic weights take and
    the one `auto` looks for; None: the weights' own (a hub id, a directory's config.json), GPT-2
    small for synthetic weights. Real weights of another model than a given `model` are refused.

    watch: chapter 04's token of interest (see watch_token; None: the prompt's default).

    The cache is looked up first and a hit imports neither torch nor transformers.
    """
    ids = validate_prompt(prompt)
    if model is not None:
        models.get(model)      # an unknown model is refused before anything loads
    conflict = model_conflict(weights, model)
    if conflict:
        raise ExtractError(conflict)
    model = effective_model(weights, model)
    spec = WeightsSpec(resolve_weights(weights, log, model), model)
    source = weights_source(weights, spec.name)
    if source:
        log(source)
    watch = watch_token(prompt, watch)
    options = {"top_k": TOP_K, "n_generate": N_GENERATE, "sample_seed": SAMPLE_SEED,
               "watch": watch and watch["text"], "code": producer_fingerprint()}
    key = bundle_io.cache_key(prompt, spec.identity(), options)
    directory = bundle_io.bundle_dir(prompt, key, root)
    if directory.exists() and not force:
        try:
            b = bundle_io.load(directory, advice="")   # the cache mends itself: no advice to give
            log(f"reusing bundle {directory} (same prompt, weights and extraction code)")
            return b
        except bundle_io.BundleError as exc:
            log(f"bundle {directory} is unusable ({exc}); extracting it again")

    return _extract_fresh(prompt, ids, spec, watch, key, directory, log)


class _Steps:
    """Extraction's progress in a terminal, as the render shows its own: a rich Progress on stderr naming
    the step under way (quiet when stderr is not a terminal). `step(what)` finishes the step before and
    names the next; `say(line)` logs through the caller's `log` with the bar lifted, so lines never
    run into it; `paused()` lifts it while transformers shows its own bar (loading the weights)."""

    def __init__(self, total: int, title: str, log):
        from rich.console import Console
        from rich.progress import Progress
        console = Console(stderr=True)
        self.shown = console.is_terminal and not console.is_dumb_terminal
        self.progress = Progress(console=console, transient=True, disable=not self.shown)
        self.title, self.total, self.log, self.task = title, total, log, None

    def __enter__(self):
        self.progress.__enter__()
        self.task = self.progress.add_task(self.title, total=self.total)
        return self

    def step(self, what: str, done: int = 1):
        self.progress.update(self.task, advance=done, description=f"{self.title}: {what}")

    def say(self, line: str):
        with self.paused():
            self.log(line)

    @contextlib.contextmanager
    def paused(self):
        if self.shown:
            self.progress.stop()
        try:
            yield
        finally:
            if self.shown:
                self.progress.start()

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)


def _extract_fresh(prompt: str, ids: list[int], spec: WeightsSpec, watch: dict | None,
                   key: str, directory: Path, log) -> bundle_io.Bundle:
    """Load the model, run it once, check everything, write the bundle (extract() found no cache)."""
    # steps: load, forward pass, logit lens, N_GENERATE tokens, hash, write (the last one ends with the block)
    title = f"extracting {spec.model}" + (f" ({spec.name} weights)" if spec.synthetic else "")
    with _Steps(5 + N_GENERATE, title, log) as steps:
        steps.step("loading the weights", 0)
        return _extract_steps(prompt, ids, spec, watch, key, directory, steps.say, steps)


def _extract_steps(prompt: str, ids: list[int], spec: WeightsSpec, watch: dict | None,
                   key: str, directory: Path, log, steps: _Steps) -> bundle_io.Bundle:
    import torch  # heavy (~1 s): a cached bundle never gets here
    torch.set_grad_enabled(False)
    # real weights: transformers' own bar while it reads them; synthetic ones: ours while they are drawn
    with steps.paused() if not spec.synthetic else contextlib.nullcontext():
        model = load_model(spec)
    cfg = model.config
    if len(ids) + N_GENERATE > cfg.n_positions:
        raise ExtractError(f"the prompt is {len(ids)} tokens; this model reads at most {cfg.n_positions}")
    log(f"running {spec.name + '-weight ' if spec.synthetic else ''}GPT-2 ({cfg.n_layer} layers, "
        f"{cfg.n_embd} wide) on {len(ids)} tokens")
    steps.step(f"one forward pass ({cfg.n_layer} layers)")
    tensors, checks = run_forward(model, ids)
    steps.step("the logit lens")
    tensors["lens_ids"], tensors["lens_probs"] = logit_lens(model, tensors["resid_post"])
    steps.step(f"generating {N_GENERATE} tokens")
    generated, tensors["gen_topk_ids"], tensors["gen_topk_probs"] = generate(
        model, ids, N_GENERATE, on_token=lambda i: steps.step(f"generating ({i + 1} of {N_GENERATE} tokens done)"))

    # one sampled pick from the last row at temperature 1, reproducible from the stored seed
    last = torch.softmax(torch.from_numpy(tensors["logits"][-1]).double(), -1)
    sampled = int(torch.multinomial(last, 1, generator=torch.Generator().manual_seed(SAMPLE_SEED)))

    config = {k: getattr(cfg, k) for k in ("n_layer", "n_head", "n_embd", "vocab_size", "n_positions", "n_inner",
                                            "layer_norm_epsilon", "activation_function")}
    shape = Shape.from_config(config)
    actual_params = sum(p.numel() for p in model.parameters())
    meta = {
        "prompt": prompt,
        "token_ids": ids,
        "token_texts": tokenizer.token_texts(ids),
        # the hub id that was loaded; a directory's family member (else "gpt2", the architecture)
        "model_id": f"{'gpt2' if spec.name.startswith('tiny') else spec.model}-architecture ({spec.name} weights)"
        if spec.synthetic else spec.name if spec.name in models.FAMILY
        else (models.member_name(config) or "gpt2"),
        # the family member explained (onepass.data.models): the one synthetic weights imitate (a 'mini' keeps
        # its layers and heads), else the one with this architecture; None for any other shape (tiny)
        "model": (None if spec.name.startswith("tiny") else spec.model) if spec.synthetic
        else models.member_name(config),
        "weights": weights_meta(spec, model, steps),
        "config": config,
        "parameters": dict(parameter_counts(shape, cfg.n_positions), counted_by_torch=actual_params),
        "libraries": library_versions(),
        "created_by": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cache_key": key,
        "top_k": TOP_K,
        "top_ids": [int(i) for i in np.argsort(-tensors["logits"][-1])[:TOP_K]],
        "generated": generated,
        "sample": {"seed": SAMPLE_SEED, "temperature": 1.0, "id": sampled, "text": tokenizer.decode([sampled])},
        "cosine": cosine_pairs(model),
        "watch": watch,
        "checks": checks,
    }
    if meta["parameters"]["total"] != actual_params:
        raise ExtractError(f"parameter count mismatch: ledger {meta['parameters']['total']:,} "
                           f"vs model {actual_params:,}")
    problems = bundle_io.schema_problems(tensors, meta)
    if problems:
        raise ExtractError(f"the extracted tensors do not match data/bundle.py's SCHEMA: {'; '.join(problems)} "
                           "(a tensor added in one place and not the other?)")
    steps.step("writing the bundle")
    bundle_io.save(directory, tensors, meta)
    log(f"wrote bundle {directory}")
    return bundle_io.load(directory)
