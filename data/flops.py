"""The FLOPs ledger: every multiply-add of one forward pass, itemised.

Conventions (DESIGN.md):
* 2 FLOPs per multiply-add (a matrix product m x n times n x p costs 2*m*n*p).
* Counted: the matrix products (q/k/v, output projection, MLP up/down, the
  unembedding), the positional addition (T*d adds), and the attention score
  (q.k) and mixing (weights x v) products over the full T x T grid.
* Not counted: softmax, LayerNorm, GELU, bias adds, the 1/sqrt(d_head) scale and
  the residual additions. They are O(T*d) and small; the ledger says so in NOT_COUNTED.
* The unembedding is paid for the last row only (the one that picks the next token).

Everything is a pure function of the config numbers and the token count T.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

from onepass.data import arch
from onepass.data.arch.spec import Shape

NOT_COUNTED = "softmax, LayerNorm, GELU, bias adds, the 1/sqrt(d_head) scale and residual adds are not counted"
# the same convention in a Llama-style decoder's words (RoPE's rotation is counted, as GPT-2's position add is)
NOT_COUNTED_RMS = ("softmax, RMSNorm, SiLU, the gate's product, the 1/sqrt(d_head) scale and residual adds "
                   "are not counted")


def not_counted(shape: Shape) -> str:
    """What the ledger leaves out, in this architecture's words."""
    return NOT_COUNTED if shape.norm == "layernorm" else NOT_COUNTED_RMS


GPT2_SMALL = arch.gpt2.FAMILY["gpt2"].shape()
# GPT-3 175B's context length, n_ctx = 2048 (Brown et al. 2020, "Language Models are
# Few-Shot Learners", Table 2.1); only its position table depends on it.
GPT3_N_POSITIONS = 2048
GPT3 = Shape(n_layer=96, n_head=96, n_embd=12288, vocab=50257, n_positions=GPT3_N_POSITIONS)
FP16_BYTES = 2                 # bytes per number in half precision (the usual KV-cache format)
LONG_CONTEXT = 1_000_000       # a million-token context, the n² bill's far end (seeds, chapter 06)
REPLY_TOKENS = 100             # "a 100-token reply" priced in chapter 06 (seeds, chapter 06)


@dataclass(frozen=True)
class Entry:
    key: str          # stable id scenes use: "L0.qkv", "positions", "unembed" ...
    step: str         # what is being paid for, in words
    formula: str      # how it is computed, in symbols
    flops: int
    total: int        # running total after this entry
    layer: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def message(self, shape: Shape) -> tuple[str, dict]:
        """The meter's words for this step as a catalog message and its values ('L0.qkv' ->
        ('film:step-qkv', {'layer': 1}), 'layer 1: q, k, v projections'): the one place the scene's
        meter (scenes/base.py) and the handout's ledger (film/kit/handout.py) get them from."""
        kind = self.key.split(".", 1)[1] if self.layer is not None else self.key
        values = {"layer": self.layer + 1} if self.layer is not None else {}
        if kind in ("mlp_gate", "mlp_up", "mlp_down"):
            values.update(d=shape.n_embd, dff=shape.d_ff)
        return f"film:step-{kind}", values


class Ledger:
    def __init__(self, entries: list[Entry]):
        self.entries = entries
        self._by_key = {e.key: e for e in entries}

    @property
    def total(self) -> int:
        return self.entries[-1].total if self.entries else 0

    def __getitem__(self, key: str) -> Entry:
        try:
            return self._by_key[key]
        except KeyError:
            raise KeyError(f"no ledger entry {key!r}; known: {', '.join(self._by_key)}") from None

    def after(self, key: str) -> int:
        """Running total once `key` has been paid."""
        return self[key].total

    def before(self, key: str) -> int:
        e = self[key]
        return e.total - e.flops

    def layer_flops(self, layer: int) -> int:
        return sum(e.flops for e in self.entries if e.layer == layer)

    def attention_flops(self, layer: int) -> int:
        return sum(self._by_key[f"L{layer}.{k}"].flops for k in ("qkv", "rope", "scores", "mix", "out")
                   if f"L{layer}.{k}" in self._by_key)

    def mlp_flops(self, layer: int) -> int:
        return sum(self._by_key[f"L{layer}.{k}"].flops for k in ("mlp_gate", "mlp_up", "mlp_down")
                   if f"L{layer}.{k}" in self._by_key)

    def as_dicts(self) -> list[dict]:
        return [e.as_dict() for e in self.entries]


def forward_ledger(shape: Shape, T: int) -> Ledger:
    """Itemised FLOPs of one full forward pass over T tokens (the items are the architecture's own:
    data/arch/<name>/ledger.py)."""
    if T < 1:
        raise ValueError("a forward pass needs at least one token")
    entries, total = [], 0
    for key, step, formula, flops, layer in arch.of(shape).ledger_items(shape, T):
        total += flops
        entries.append(Entry(key, step, formula, flops, total, layer))
    return Ledger(entries)


def decode_step_flops(shape: Shape, context: int) -> int:
    """FLOPs to produce one new token with a KV cache holding `context` - 1 earlier tokens.

    Only the new row is projected (k and v at the key/value heads' width); it attends to all
    `context` keys. Its positions: one table row added, or its q and k rotated.
    """
    d, dff, H, KV, dh = shape.n_embd, shape.d_ff, shape.n_head, shape.kv_heads, shape.d_head
    mlp_matrices = 3 if shape.mlp == "swiglu" else 2
    per_layer = (2 * d * (H + 2 * KV) * dh + 2 * context * H * dh * 2 + 2 * H * dh * d
                 + 2 * d * dff * mlp_matrices)
    if shape.has_position_table:
        positions = d
    else:
        positions, per_layer = 0, per_layer + 3 * (H + KV) * dh
    return positions + shape.n_layer * per_layer + 2 * d * shape.vocab


def kv_cache_numbers_per_token(shape: Shape) -> int:
    """Numbers cached per token: one key and one value vector per layer and key/value head
    (2 × layers × key/value heads × d_head; GPT-2's 2 × layers × d)."""
    return 2 * shape.n_layer * shape.kv_heads * shape.d_head


def kv_cache_numbers_without_gqa(shape: Shape) -> int:
    """What the same model would cache per token with one key/value head per query head."""
    return 2 * shape.n_layer * shape.n_head * shape.d_head


def attention_pairs(T: int) -> int:
    """Query-key pairs scored in one head of one layer (the full T x T grid)."""
    return T * T


def causal_pairs(T: int) -> int:
    """Query-key pairs the causal mask allows (the lower triangle with its diagonal)."""
    return T * (T + 1) // 2


def attention_grid_flops(shape: Shape, T: int) -> int:
    """Score and mixing FLOPs of all layers at T tokens (the T x T part of the ledger)."""
    return shape.n_layer * 2 * (2 * T * T * shape.n_head * shape.d_head)


def kv_cache_bytes(shape: Shape, tokens: int, bytes_per_number: int = FP16_BYTES) -> int:
    """Bytes the KV cache holds for `tokens` tokens (fp16 unless told otherwise)."""
    return tokens * kv_cache_numbers_per_token(shape) * bytes_per_number


def generation_flops(shape: Shape, prompt_tokens: int, new_tokens: int, cached: bool = True) -> int:
    """FLOPs to write `new_tokens` tokens after a prompt of `prompt_tokens`.

    The first new token comes from the full pass over the prompt (the prefill). Each
    later one comes from a context one longer: with a KV cache a decode step
    (`decode_step_flops`), without one a full forward pass over the whole context.
    """
    if new_tokens < 1:
        return 0
    total = forward_total(shape, prompt_tokens)
    for context in range(prompt_tokens + 1, prompt_tokens + new_tokens):
        total += decode_step_flops(shape, context) if cached else forward_total(shape, context)
    return total


@lru_cache(maxsize=8192)
def forward_total(shape: Shape, T: int) -> int:
    """forward_ledger(shape, T).total, kept: chapter 06 prices a reply without a cache as a hundred
    full passes, each an itemised ledger (thousands of entries for a 30-layer model), and every
    build of its scenes asks again for the same shape and lengths."""
    return forward_ledger(shape, T).total


def parameter_counts(shape: Shape, n_positions: int | None = None) -> dict[str, int]:
    """Parameters per component, from the shape alone (the architecture's own count:
    data/arch/<name>/ledger.py); n_positions: the position table's rows, where there is one."""
    return arch.of(shape).parameter_counts(shape, n_positions)


def human(n: float) -> str:
    """927466752 -> '927.5M'; the short form under the exact figure."""
    for unit, size in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return str(int(n))
