"""The GPT-2 family onepass can explain: each size's hub id and architecture.

The numbers are transformers' GPT2Config for each hub model (n_positions 1024, vocabulary
50,257, MLP 4·d, tied unembedding); DistilGPT2 is GPT-2 small's width with half its layers.
Parameter counts are not written here: onepass.data.flops.parameter_counts computes them from the
shape, and extraction checks that against the model it ran.
"""
from __future__ import annotations

from dataclasses import dataclass

from onepass.data.errors import OnepassError

VOCAB = 50257
N_POSITIONS = 1024
MINI_HEAD_WIDTH = 4        # --weights mini: d_head of the shape-alike test models (width 4·n_head)


@dataclass(frozen=True)
class Model:
    name: str          # the hub id, as transformers names it ("gpt2-medium")
    n_layer: int
    n_head: int
    n_embd: int
    n_positions: int = N_POSITIONS
    vocab_size: int = VOCAB

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


FAMILY: dict[str, Model] = {m.name: m for m in (
    Model("distilgpt2", n_layer=6, n_head=12, n_embd=768),
    Model("gpt2", n_layer=12, n_head=12, n_embd=768),
    Model("gpt2-medium", n_layer=24, n_head=16, n_embd=1024),
    Model("gpt2-large", n_layer=36, n_head=20, n_embd=1280),
    Model("gpt2-xl", n_layer=48, n_head=25, n_embd=1600),
)}
DEFAULT = "gpt2"


class UnknownModel(OnepassError, ValueError):
    """A --model that is not in the family; the message lists the family."""


def get(name: str) -> Model:
    try:
        return FAMILY[name]
    except KeyError:
        raise UnknownModel(f"unknown model {name!r}; onepass knows the GPT-2 family: "
                           f"{', '.join(FAMILY)}") from None


def family_of(config: dict) -> Model | None:
    """The family member with this config's architecture (a weights directory's config.json), or None."""
    for m in FAMILY.values():
        if all(config.get(k) == v for k, v in m.config().items()):
            return m
    return None


def member_name(config: dict | None) -> str | None:
    """The hub id of the family member with this architecture (family_of), or None."""
    found = family_of(config or {})
    return found.name if found else None
