"""The bundle: everything one forward pass produced, on disk, safe to cite.

Layout of a bundle directory:
    tensors.safetensors   every tensor declared in SCHEMA below (float32 / int64), no pickle
    meta.json             schema version, prompt, ids, model id, sha256 of the
                          weights and of tensors.safetensors, library versions,
                          the command that made it, config, small facts

A bundle is written to a temporary sibling directory and renamed into place,
so a crash never leaves a half-written bundle where a good one was.
"""
from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file   # numpy flavour: no torch import

from onepass.data.errors import OnepassError
from onepass.data import home, tokenizer
from onepass.data.arch.spec import LEARNED, RMSNORM, ROPE, SWIGLU
from onepass.data.flops import Shape, forward_ledger

SCHEMA_VERSION = 1
TENSORS = "tensors.safetensors"
META = "meta.json"


class BundleError(OnepassError, RuntimeError):
    """A bundle that cannot be used; the message says what to do."""


def cache_key(prompt: str, weights_identity: str, options: dict | None = None) -> str:
    """Same prompt + same weights + same schema (+ extraction options, which hold the extraction
    code's fingerprint) -> same bundle."""
    payload = json.dumps({"prompt": prompt, "weights": weights_identity,
                          "schema": SCHEMA_VERSION, "options": options or {}}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def slug(text: str, limit: int = 40) -> str:
    """'The cat sat on the' -> 'the-cat-sat-on-the'. Letters, digits and their combining marks of
    any script are kept, lower-cased ('Привет, мир' -> 'привет-мир'); every run of anything else
    (spaces, punctuation, symbols, emoji, slashes, control characters) becomes one '-'; at most
    `limit` characters. Safe as a folder name; not unique (see onepass.film.plan.jobs.output_name)."""
    out, dash = [], False
    for ch in unicodedata.normalize("NFC", text).lower():
        kind = unicodedata.category(ch)[0]
        if kind in "LN" or (kind == "M" and out and not dash):
            if dash and out:
                out.append("-")
            out.append(ch)
            dash = False
        else:
            dash = True
    return "".join(out)[:limit].strip("-") or "prompt"


def bundle_dir(prompt: str, key: str, root: Path | None = None) -> Path:
    """The bundle's folder under `root` (default: onepass.data.home.bundles_dir(), the user's cache)."""
    return Path(root if root is not None else home.bundles_dir()) / f"{slug(prompt)}-{key[:12]}"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class TensorSpec:
    """One tensor of the bundle: its shape in the letters of `dims()`, its dtype, what it is, and
    (`when`) the components a model needs for it to exist (None: every model has it)."""
    shape: str
    dtype: str = "float32"
    about: str = ""
    when: Callable[[Shape], bool] | None = None

    def applies(self, shape: Shape) -> bool:
        return self.when is None or self.when(shape)


def _table(s: Shape) -> bool:
    return s.positions == LEARNED


def _rope(s: Shape) -> bool:
    return s.positions == ROPE


def _rms(s: Shape) -> bool:
    return s.norm == RMSNORM


def _gated(s: Shape) -> bool:
    return s.mlp == SWIGLU


def _qk_norm(s: Shape) -> bool:
    return s.qk_norm


def _kv_declared(s: Shape) -> bool:
    return s.n_kv_head is not None


# Every tensor a bundle holds, declared once. Extraction checks what it made against this
# before saving; load() checks what it read. Adding a tensor means one line here (plus the
# code in the architecture's capture.py that makes it). Shape letters are defined by dims();
# names are the same for every architecture (ln1 is the first norm's output, LayerNorm or RMSNorm).
SCHEMA: dict[str, TensorSpec] = {
    "token_ids":      TensorSpec("T", "int64", "the prompt's token ids"),
    "wte_rows":       TensorSpec("T d", about="token-embedding rows of those ids"),
    "wpe_rows":       TensorSpec("T d", about="position-embedding rows 0..T-1", when=_table),
    "wpe_table":      TensorSpec("P d", about="the whole position-embedding table", when=_table),
    "resid_pre":      TensorSpec("L T d", about="each block's input (hook)"),
    "rms1":           TensorSpec("L T", about="first RMSNorm's divisor sqrt(mean x² + eps) per token", when=_rms),
    "ln1":            TensorSpec("L T d", about="first norm's output (hook)"),
    "q_prerot":       TensorSpec("L H T dh", about="queries before the rotation (after q_norm where there is one)",
                                 when=_rope),
    "k_prerot":       TensorSpec("L KV T dh", about="keys before the rotation, per key/value head", when=_rope),
    "q_prenorm":      TensorSpec("L H T dh", about="queries per head before the q/k norm (the projection's output)",
                                 when=_qk_norm),
    "k_prenorm":      TensorSpec("L KV T dh", about="keys per key/value head before the q/k norm", when=_qk_norm),
    "q_norm_w":       TensorSpec("L dh", about="the q norm's gain: one per number of a head, shared by the heads",
                                 when=_qk_norm),
    "k_norm_w":       TensorSpec("L dh", about="the k norm's gain, likewise", when=_qk_norm),
    "rope_inv_freq":  TensorSpec("dh2", about="each rotary pair's speed, radians per position; dimension i "
                                 "turns with i + dh/2 (transformers' pairing)", when=_rope),
    "kv_head":        TensorSpec("H", "int64", "the key/value head each query head reads (h // group)",
                                 when=_kv_declared),
    "q":              TensorSpec("L H T dh", about="queries per head (rotated, where the model rotates)"),
    "k":              TensorSpec("L KV T dh", about="keys per key/value head, likewise"),
    "v":              TensorSpec("L KV T dh", about="values per key/value head"),
    "scores_raw":     TensorSpec("L H T T", about="q @ k^T"),
    # float64: dividing float32 by numpy's float64 sqrt promotes (kept so bundles stay byte-identical)
    "scores_scaled":  TensorSpec("L H T T", "float64", "scores_raw / sqrt(dh)"),
    "scores_masked":  TensorSpec("L H T T", about="scores_scaled with the future set to -inf"),
    "probs":          TensorSpec("L H T T", about="the model's own attention weights"),
    "head_out":       TensorSpec("L H T dh", about="probs @ v"),
    "attn_out":       TensorSpec("L T d", about="attention block's output after c_proj (hook)"),
    "resid_mid":      TensorSpec("L T d", about="resid_pre + attn_out"),
    "rms2":           TensorSpec("L T", about="second RMSNorm's divisor per token", when=_rms),
    "ln2":            TensorSpec("L T d", about="second norm's output (hook)"),
    "mlp_gate":       TensorSpec("L T dff", about="the gate projection's output, before SiLU (hook)", when=_gated),
    "mlp_pre":        TensorSpec("L T dff", about="the up projection's output: before GELU, or SwiGLU's linear branch"),
    "mlp_hidden":     TensorSpec("L T dff", about="after the activation: GELU(pre), or SiLU(gate)·up (hook)"),
    "mlp_out":        TensorSpec("L T d", about="MLP's output after c_proj (hook)"),
    "resid_post":     TensorSpec("L T d", about="each block's output (hook)"),
    "rms_f":          TensorSpec("T", about="final RMSNorm's divisor per token", when=_rms),
    "ln_f":           TensorSpec("T d", about="final norm's output (hook)"),
    "logits":         TensorSpec("T V", about="the model's logits"),
    "lens_ids":       TensorSpec("L k", "int64", "logit lens: top ids of the last row after each layer"),
    "lens_probs":     TensorSpec("L k", about="logit lens: their probabilities"),
    "gen_topk_ids":   TensorSpec("G k", "int64", "top ids of each generated step"),
    "gen_topk_probs": TensorSpec("G k", about="their probabilities"),
}


def dims(cfg: dict, T: int, meta: dict) -> dict[str, int]:
    """The sizes SCHEMA's shape letters stand for, from config, token count and meta."""
    shape = Shape.from_config(cfg)
    return {"L": shape.n_layer, "H": shape.n_head, "KV": shape.kv_heads, "T": T, "d": shape.n_embd,
            "dh": shape.d_head, "dh2": shape.d_head // 2, "dff": shape.d_ff, "V": shape.vocab, "P": shape.n_positions,
            "k": meta["top_k"], "G": len(meta["generated"])}


def expected_shapes(cfg: dict, T: int, meta: dict) -> dict[str, tuple[int, ...]]:
    """Shape of every tensor a bundle must hold (SCHEMA evaluated for this config and T)."""
    n, shape = dims(cfg, T, meta), Shape.from_config(cfg)
    return {name: tuple(n[letter] for letter in spec.shape.split()) for name, spec in SCHEMA.items()
            if spec.applies(shape)}


def schema_problems(tensors: dict[str, np.ndarray], meta: dict, extra_ok: bool = False) -> list[str]:
    """What in `tensors` disagrees with SCHEMA for this meta: missing, wrong shape or dtype,
    and (unless extra_ok) tensors the schema does not declare."""
    problems = []
    for name, shape in expected_shapes(meta["config"], len(meta["token_ids"]), meta).items():
        if name not in tensors:
            problems.append(f"lacks tensor {name!r}")
        elif tuple(tensors[name].shape) != shape:
            problems.append(f"tensor {name!r} has shape {tuple(tensors[name].shape)}, expected {shape}")
        elif tensors[name].dtype != np.dtype(SCHEMA[name].dtype):
            problems.append(f"tensor {name!r} is {tensors[name].dtype}, expected {SCHEMA[name].dtype}")
    if not extra_ok:
        problems += [f"has tensor {name!r}, which is not in the schema" for name in tensors if name not in SCHEMA]
    return problems


def _install(tmp: Path, directory: Path):
    """Rename a finished bundle folder into place. If another run installed the same bundle (same
    folder, so same cache key) a moment earlier, keep that one: renaming over it could pull files
    from under the scenes that run is rendering."""
    try:
        os.replace(tmp, directory)
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not (directory / META).is_file():
            raise
        shutil.rmtree(tmp, ignore_errors=True)


def save(directory: Path, tensors: dict[str, np.ndarray], meta: dict) -> Path:
    """Write atomically: build in a temp dir beside the target, then rename over it."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(tmp / TENSORS))
        meta = dict(meta, schema_version=SCHEMA_VERSION, tensors_sha256=sha256_file(tmp / TENSORS))
        (tmp / META).write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
        if directory.exists():  # a stale or corrupt bundle: move it aside (a unique name), then drop it
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=directory.parent))
            os.replace(directory, old)
            _install(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
        else:
            _install(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


@dataclass
class Bundle:
    """A loaded, validated bundle. Tensors are numpy arrays; meta is plain JSON."""
    path: Path
    meta: dict
    tensors: dict[str, np.ndarray] = field(repr=False)

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.tensors[name]
        except KeyError:
            raise BundleError(f"bundle {self.path} has no tensor {name!r}") from None

    @property
    def config(self) -> dict:
        return self.meta["config"]

    @property
    def T(self) -> int:
        return len(self.meta["token_ids"])

    @property
    def prompt(self) -> str:
        return self.meta["prompt"]

    @property
    def tokens(self) -> list[str]:
        """Each token's text; a token that is part of a UTF-8 character as its bytes ('<D8>'),
        never U+FFFD (tokenizer.readable)."""
        return [t if "\ufffd" not in t else self.tokenizer.readable(i)
                for t, i in zip(self.meta["token_texts"], self.meta["token_ids"])]

    @property
    def arch(self) -> str:
        """The architecture's registry key (data/arch): 'gpt2' for bundles made before it was recorded."""
        return self.meta.get("arch", "gpt2")

    @cached_property
    def tokenizer(self):
        """The model's own tokenizer (GPT-2's module for the GPT-2 family): encode, decode, token_texts,
        readable, vocab_size."""
        if self.arch == "gpt2":
            return tokenizer
        from onepass.data import arch
        card = arch.model(self.meta["model_card"]["name"])
        spec = str(self.meta["weights"].get("spec", ""))
        try:
            return arch.of(card).tokenizer(card, spec if spec.endswith(".gguf") and Path(spec).is_file() else None,
                                           cache=home.tokenizers_dir())
        except arch.spec.WeightsError as exc:
            raise BundleError(f"{self.path}: {exc}") from None

    @property
    def ids(self) -> list[int]:
        return self.meta["token_ids"]

    @property
    def model(self) -> str | None:
        """The GPT-2 family member this bundle explains (onepass.data.models' hub id: 'gpt2', 'gpt2-xl' ...),
        or None for an architecture outside the family (the tiny test model). Bundles made before
        the family existed were all GPT-2 small's shape: read from their config."""
        if "model" in self.meta:
            return self.meta["model"]
        from onepass.data import models
        return models.member_name(self.config)

    @property
    def model_named(self) -> str | None:
        """The --model name whose predictions these are, or would be with its trained weights: the model
        explained (Bundle.model) or, for a small synthetic model of no listed shape, the model it imitates
        (its card: the tiny test models). What the random-weights mark names (film:synthetic-mark)."""
        return self.model or (self.meta.get("model_card") or {}).get("name")

    @property
    def synthetic(self) -> bool:
        """True when the weights are random: probabilities are noise."""
        return bool(self.meta["weights"]["synthetic"])

    @cached_property
    def last_probs(self) -> np.ndarray:
        """Softmax of the last row's logits, float64 for exact sums. Shape [V]."""
        z = self["logits"][-1].astype(np.float64)
        p = np.exp(z - z.max())
        return p / p.sum()

    def featured_head(self, layer: int = 0) -> int:
        """The head whose last-row attention is least uniform (lowest entropy)."""
        p = self["probs"][layer, :, -1, :].astype(np.float64)  # [H, T]
        entropy = -(p * np.log(np.clip(p, 1e-30, None))).sum(-1)
        return int(np.argmin(entropy))

    @cached_property
    def shape(self) -> Shape:
        """The model's sizes (n_layer, n_head, n_embd, vocab, d_head, d_ff): the one place a
        config becomes numbers, for the ledger, the scenes and the narration alike."""
        return Shape.from_config(self.config)

    def ledger(self):
        return forward_ledger(self.shape, self.T)


# What to do about a folder passed as --bundle that cannot be used. The bundle cache never needs
# it (extract() re-extracts an unusable cached bundle by itself), and a --bundle folder is the
# user's own: onepass never suggests deleting it.
ADVICE = ("render without --bundle to extract a fresh bundle from --prompt and --weights, "
          "or point --bundle at a bundle folder onepass wrote (bundles/<prompt>-<key>/ in its cache folder)")

_CONFIG_INTS = ("n_layer", "n_head", "n_embd", "vocab_size", "n_positions")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def control_characters(text: str) -> list[str]:
    """The characters of `text` no screen or caption can show, each once, in order: C0 controls
    (but tab and newline), DEL, the C1 controls and lone surrogates. A prompt holding one is
    refused, whether typed (extract.validate_prompt) or read back from a bundle."""
    return sorted({c for c in text if (ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F
                   or 0xD800 <= ord(c) <= 0xDFFF})


# Bidirectional formatting characters (embeddings, overrides, isolates, marks): on a screen, in a
# caption or a PDF they reorder what follows them, so a prompt holding one would not read as typed
# (chapter 00's prompt box lost "RLO" and moved "%"). Every output shows each by its code point.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def shown_text(text: str) -> str:
    """A user's text as every output shows it: bidi controls as ‹U+202E› (what the model reads is
    unchanged: the tokens keep them)."""
    return "".join(f"‹U+{ord(c):04X}›" if c in BIDI_CONTROLS else c for c in text)


def meta_problems(meta) -> list[str]:
    """What in meta.json's structure the film cannot use (checked before any tensor is read):
    the keys extraction writes and the scenes read, with the types and sizes they need."""
    if not isinstance(meta, dict):
        return [f"{META} holds a JSON {type(meta).__name__}, not an object"]
    problems = []
    kinds = {"prompt": str, "token_ids": list, "token_texts": list, "model_id": str, "weights": dict,
             "config": dict, "parameters": dict, "top_k": int, "top_ids": list, "generated": list,
             "sample": dict, "cosine": list}
    for key, kind in kinds.items():
        if key not in meta:
            problems.append(f"{META} lacks {key!r}")
        elif not isinstance(meta[key], kind) or (kind is int and isinstance(meta[key], bool)):
            problems.append(f"{META}'s {key!r} is a {type(meta[key]).__name__}, expected a {kind.__name__}")
    if problems:
        return problems
    cfg = meta["config"]
    for key in _CONFIG_INTS:
        if not _is_int(cfg.get(key)) or cfg[key] < 1:
            problems.append(f"{META}'s config {key!r} is {cfg.get(key)!r}, expected a whole number of at least 1")
    if not problems and cfg.get("head_dim") is None and cfg["n_embd"] % cfg["n_head"]:
        problems.append(f"{META}'s config: n_embd {cfg['n_embd']} is not divisible by n_head {cfg['n_head']}")
    if cfg.get("n_inner") is not None and (not _is_int(cfg["n_inner"]) or cfg["n_inner"] < 1):
        problems.append(f"{META}'s config 'n_inner' is {cfg['n_inner']!r}, expected null or a whole number")
    ids, texts = meta["token_ids"], meta["token_texts"]
    if not ids or not all(_is_int(i) and 0 <= i < cfg.get("vocab_size", 0) for i in ids):
        problems.append(f"{META}'s 'token_ids' must be a non-empty list of token ids below the vocabulary size")
    elif _is_int(cfg.get("n_positions")) and len(ids) > cfg["n_positions"]:
        problems.append(f"{META} has {len(ids)} tokens, more than the model's {cfg['n_positions']} positions")
    if len(texts) != len(ids) or not all(isinstance(t, str) for t in texts):
        problems.append(f"{META}'s 'token_texts' must be one string per token id")
    if meta["top_k"] < 1 or not all(_is_int(i) for i in meta["top_ids"]):
        problems.append(f"{META}'s 'top_k'/'top_ids' are not a count and a list of token ids")
    elif not all(0 <= i < cfg.get("vocab_size", 0) for i in meta["top_ids"]):     # indexes into the vocabulary
        problems.append(f"{META}'s 'top_ids' must be token ids below the vocabulary size")
    bad = control_characters(meta["prompt"])
    if bad or not meta["prompt"].strip():       # the prompt is drawn on screen: checked as when typed
        problems.append(f"{META}'s 'prompt' " + (f"holds control characters ({', '.join(f'U+{ord(c):04X}' for c in bad)})"
                                               if bad else "is empty"))
    if "synthetic" not in meta["weights"] or "sha256" not in meta["weights"]:
        problems.append(f"{META}'s 'weights' lacks 'synthetic' or 'sha256'")
    if not problems:
        problems += inner_problems(meta)
    return problems


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _shown_text(x) -> bool:
    """A string the film may draw: no control characters (as a prompt), not absurdly long."""
    return isinstance(x, str) and len(x) <= 200 and not control_characters(x)


def inner_problems(meta: dict) -> list[str]:
    """What in the values inside meta.json the chapters read cannot be used (issue 41): the
    parameter counts (chapters 01, 06), the sampled token (04), the watched token (04), the
    generated steps (04, 06), the embedding cosine pairs (01), the model's name. Called by
    meta_problems once the top level is right."""
    problems, vocab, positions = [], meta["config"]["vocab_size"], meta["config"]["n_positions"]

    def token_id(x) -> bool:
        return _is_int(x) and 0 <= x < vocab
    params = meta["parameters"]
    if not all(_is_int(params.get(k)) and params[k] >= 1 for k in ("wte", "total")) \
            or params["wte"] > params["total"]:
        problems.append(f"{META}'s 'parameters' must hold whole-number counts 'wte' and 'total' (wte at most total)")
    elif not all(_is_int(v) and v >= 0 for v in params.values()):
        problems.append(f"{META}'s 'parameters' must all be whole-number counts")
    sample = meta["sample"]
    if not (_is_int(sample.get("seed")) and sample["seed"] >= 0 and _is_number(sample.get("temperature"))
            and sample["temperature"] > 0 and token_id(sample.get("id"))):
        # the seed seeds numpy's generator (chapter 04's roll), which takes no negative number
        problems.append(f"{META}'s 'sample' must hold a whole-number 'seed' (0 or more), a positive 'temperature' and a "
                        "token 'id' below the vocabulary size")
    watch = meta.get("watch")
    if watch is not None and not (isinstance(watch, dict) and token_id(watch.get("id"))
                                  and _shown_text(watch.get("text")) and watch["text"]):
        problems.append(f"{META}'s 'watch' must be null or a token's 'text' and its 'id' below the vocabulary size")
    gen = meta["generated"]
    if len(gen) > positions or not all(isinstance(g, dict) and token_id(g.get("id")) and _is_int(g.get("context_tokens"))
                                       and 1 <= g["context_tokens"] <= positions for g in gen):
        problems.append(f"{META}'s 'generated' must list steps, each a token 'id' below the vocabulary size and "
                        "its 'context_tokens' (1 to the model's positions)")
    cosine = meta["cosine"]
    if not cosine or len(cosine) > 64 or not all(
            isinstance(c, dict) and _shown_text(c.get("a")) and _shown_text(c.get("b")) and c["a"] and c["b"]
            and _is_number(c.get("cosine")) and -1.0 <= c["cosine"] <= 1.0 for c in cosine):
        problems.append(f"{META}'s 'cosine' must list word pairs, each two words 'a' and 'b' and their 'cosine' "
                        "(a number from -1 to 1)")
    if "model" in meta and meta["model"] is not None and not _shown_text(meta["model"]):
        problems.append(f"{META}'s 'model' must be null or a model's name")
    from onepass.data import arch          # the registry sits above this module's imports
    kind = meta.get("arch", "gpt2")
    if kind not in arch.ARCHITECTURES:
        problems.append(f"{META}'s 'arch' is {kind!r}, not an architecture this onepass knows "
                        f"({', '.join(arch.ARCHITECTURES)})")
    elif kind != "gpt2":
        card = meta.get("model_card")
        if not (isinstance(card, dict) and card.get("name") in arch.all_models()
                and arch.model(card["name"]).arch == kind):
            problems.append(f"{META}'s 'model_card' must name a {kind} model onepass knows (--list-models)")
    return problems


def tensor_problems(tensors: dict[str, np.ndarray]) -> list[str]:
    """Numbers no chapter can show: NaN in any tensor, an infinity anywhere but the masked scores'
    -inf (the future positions, by design). Each scene would otherwise fail, or draw 'nan'."""
    problems = []
    for name in SCHEMA:
        x = tensors.get(name)
        if x is None or x.dtype.kind != "f":
            continue
        finite = np.isfinite(x)
        if finite.all():
            continue
        if np.isnan(x).any():
            problems.append(f"tensor {name!r} holds NaN ({int(np.isnan(x).sum())} of {x.size} values)")
        elif name != "scores_masked" or np.isposinf(x).any():
            problems.append(f"tensor {name!r} holds infinite values")
    return problems


def load(directory: Path, advice: str = ADVICE) -> Bundle:
    """Load and validate; any problem raises BundleError saying what is wrong and (`advice`)
    what to do about it."""
    directory = Path(directory)

    def refuse(problem: str) -> BundleError:
        return BundleError(f"{problem}; {advice}" if advice else problem)
    meta_path, tensor_path = directory / META, directory / TENSORS
    if not meta_path.is_file() or not tensor_path.is_file():
        raise refuse(f"{directory} is not a complete bundle (needs {META} and {TENSORS})")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as exc:   # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise refuse(f"{meta_path} is corrupt ({exc})") from None
    version = meta.get("schema_version") if isinstance(meta, dict) else None
    if isinstance(meta, dict) and version != SCHEMA_VERSION:
        raise refuse(f"{directory} has schema version {version}, this onepass reads {SCHEMA_VERSION}")
    problems = meta_problems(meta)
    if problems:
        raise refuse(f"{directory} is not a usable bundle: {problems[0]}")
    if sha256_file(tensor_path) != meta.get("tensors_sha256"):
        raise refuse(f"{tensor_path} does not match the checksum in {META} (corrupt or edited)")
    try:
        tensors = load_file(str(tensor_path))
    except Exception as exc:  # safetensors raises its own error types
        raise refuse(f"{tensor_path} cannot be read ({exc})") from None
    problems = schema_problems(tensors, meta, extra_ok=True)   # as before: extra tensors are ignored
    problems = problems or tensor_problems(tensors)
    if problems:
        raise refuse(f"{directory}: {problems[0]}")
    if list(tensors["token_ids"]) != meta["token_ids"]:
        raise refuse(f"{directory}: token ids in {META} and {TENSORS} disagree")
    return Bundle(directory, meta, tensors)
