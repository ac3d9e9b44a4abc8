"""The GPT-2 family: each size's hub id and shape.

The numbers are transformers' GPT2Config for each hub model (n_positions 1024, vocabulary 50,257,
MLP 4·d, tied unembedding; https://huggingface.co/<id>/blob/main/config.json); DistilGPT2 is GPT-2
small's width with half its layers. Parameter counts are not written here: ledger.parameter_counts
computes them from the shape, and extraction checks that against the model it ran.
"""
from __future__ import annotations

from dataclasses import dataclass

from onepass.data.arch.base.spec import Shape

VOCAB = 50257
N_POSITIONS = 1024
MINI_HEAD_WIDTH = 4        # --weights mini: d_head of the shape-alike test models (width 4·n_head)
# a tiny GPT-2 for tests and quick previews (real vocabulary so the tokenizer still fits)
TINY_CONFIG = dict(n_layer=2, n_head=4, n_embd=64, n_positions=128)


@dataclass(frozen=True)
class Model:
    name: str          # the hub id, as transformers names it ("gpt2-medium"), and --model's name
    n_layer: int
    n_head: int
    n_embd: int
    n_positions: int = N_POSITIONS
    vocab_size: int = VOCAB
    arch: str = "gpt2"
    hub_id: str | None = None          # None: the name is the hub id
    weights_from: str = "hub"          # where real weights come from (--list-models)
    gated: bool = False

    @property
    def hub(self) -> str:
        return self.hub_id or self.name

    def config(self) -> dict:
        """GPT2Config keyword arguments for this architecture."""
        return dict(n_layer=self.n_layer, n_head=self.n_head, n_embd=self.n_embd,
                    n_positions=self.n_positions, vocab_size=self.vocab_size)

    def mini_config(self) -> dict:
        """The same layers and heads at a small width (MINI_HEAD_WIDTH per head) and a short
        context: every count a scene lays out (floors, head panels, lens rows) is the real
        model's, yet it extracts in seconds. For tests and quick layout previews."""
        return dict(n_layer=self.n_layer, n_head=self.n_head, n_embd=self.n_head * MINI_HEAD_WIDTH,
                    n_positions=128, vocab_size=self.vocab_size)

    def tiny_config(self) -> dict:
        return dict(TINY_CONFIG)

    def shape(self) -> Shape:
        return shape_of(self.config())


FAMILY: dict[str, Model] = {m.name: m for m in (
    Model("distilgpt2", n_layer=6, n_head=12, n_embd=768),
    Model("gpt2", n_layer=12, n_head=12, n_embd=768),
    Model("gpt2-medium", n_layer=24, n_head=16, n_embd=1024),
    Model("gpt2-large", n_layer=36, n_head=20, n_embd=1280),
    Model("gpt2-xl", n_layer=48, n_head=25, n_embd=1600),
)}
DEFAULT = "gpt2"


def shape_of(config: dict) -> Shape:
    """GPT2Config's numbers (a dict of them) as the uniform shape: everything else is GPT-2's default."""
    return Shape(n_layer=config["n_layer"], n_head=config["n_head"], n_embd=config["n_embd"],
                 vocab=config["vocab_size"], n_inner=config.get("n_inner"),
                 n_positions=config.get("n_positions", N_POSITIONS))
