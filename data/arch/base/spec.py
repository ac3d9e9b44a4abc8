"""One shape for every architecture: the few numbers and components the ledger, the bundle schema,
the facts and the scenes ask about.

An architecture folder (data/arch/<name>/) maps its family's own config onto this shape. Everything
above data/arch asks about *components* ("has a position table?", "norm kind", "query heads per
key/value head"), never about a model's name.
"""
from __future__ import annotations

from dataclasses import dataclass, field


# component values (strings, so a bundle's meta.json says them in words)
LAYERNORM, RMSNORM = "layernorm", "rmsnorm"
GELU, SWIGLU = "gelu", "swiglu"
LEARNED, ROPE = "learned", "rope"


@dataclass(frozen=True)
class Shape:
    """The model's sizes and components (a bundle's: bundle.shape, the one place its config becomes
    numbers). Defaults are GPT-2's, so GPT-2's configs read exactly as before."""
    n_layer: int
    n_head: int                 # query heads
    n_embd: int                 # the residual stream's width, d
    vocab: int
    n_inner: int | None = None  # MLP width; GPT-2 uses 4 * n_embd
    n_positions: int = 1024     # the longest context: a position table's rows, or the trained length
    n_kv_head: int | None = None   # key/value heads (grouped-query attention); None: one per query head
    head_dim: int | None = None    # d_head when it is not n_embd / n_head (Qwen3)
    norm: str = LAYERNORM
    mlp: str = GELU
    positions: str = LEARNED
    tied: bool = True           # the unembedding is the embedding table, transposed
    qk_norm: bool = False       # a norm on each head's q and k before the rotation (Qwen3)
    bias: bool = True           # the linear layers carry biases (GPT-2 does, Llama does not)
    arch: str = "gpt2"          # the registry key of data/arch (its ledger and parameter counts)
    # RoPE as the model's config gives it, whole: {"rope_type", "rope_theta", and the type's own
    # scaling keys}; a tuple of items so the shape stays hashable
    rope: tuple = field(default=(), compare=True)

    @property
    def d_ff(self) -> int:
        return self.n_inner or 4 * self.n_embd

    @property
    def d_head(self) -> int:
        return self.head_dim or self.n_embd // self.n_head

    @property
    def kv_heads(self) -> int:
        return self.n_kv_head or self.n_head

    @property
    def group(self) -> int:
        """Query heads per key/value head (1 without grouped-query attention)."""
        return self.n_head // self.kv_heads

    @property
    def has_position_table(self) -> bool:
        return self.positions == LEARNED

    @property
    def rope_parameters(self) -> dict:
        return dict(self.rope)

    def kv_head_of(self, head: int) -> int:
        """The key/value head query head `head` reads."""
        return head // self.group

    @classmethod
    def from_config(cls, cfg: dict) -> "Shape":
        """A bundle's config (GPT-2's keys, plus the components an architecture folder adds)."""
        rope = cfg.get("rope") or {}
        return cls(n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"], vocab=cfg["vocab_size"],
                   n_inner=cfg.get("n_inner"), n_positions=cfg.get("n_positions", 1024),
                   n_kv_head=cfg.get("n_kv_head"), head_dim=cfg.get("head_dim"),
                   norm=cfg.get("norm", LAYERNORM), mlp=cfg.get("mlp", GELU), positions=cfg.get("positions", LEARNED),
                   tied=cfg.get("tied", True), qk_norm=cfg.get("qk_norm", False), bias=cfg.get("bias", True),
                   arch=cfg.get("arch", "gpt2"), rope=tuple(sorted(rope.items())))

    def component_tags(self) -> tuple[str, ...]:
        """The components this model has that GPT-2 has not, as words/catalog.py VARIANTS names them
        (a line's architecture wording `chNN-<beat>.<tag>`), most specific first."""
        tags = [("qknorm", self.qk_norm), ("gqa", self.kv_heads < self.n_head), ("rope", self.positions == ROPE),
                ("rmsnorm", self.norm == RMSNORM), ("swiglu", self.mlp == SWIGLU), ("untied", not self.tied)]
        return tuple(t for t, has in tags if has)

    def components(self) -> dict:
        """The config keys this shape adds to GPT-2's (written into a bundle's config)."""
        return {"arch": self.arch, "n_kv_head": self.kv_heads, "head_dim": self.d_head, "norm": self.norm,
                "mlp": self.mlp, "positions": self.positions, "tied": self.tied, "qk_norm": self.qk_norm,
                "bias": self.bias, "rope": self.rope_parameters or None}



# data/arch imports nothing of data/ outside it (the package imports one way): extraction
# (data/extract.py) turns these into ExtractError, the user-facing OnepassError.
class CaptureError(RuntimeError):
    """A captured pass disagrees with its own model past the tolerances: a bug in onepass's hooks."""


class WeightsError(RuntimeError):
    """Weights that cannot be used (missing, truncated, not what they claim); the message says what to do."""
