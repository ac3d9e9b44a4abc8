"""Chapter 07 facts: what changed since GPT-2, two models on one prompt.

The chapter sets the rendered bundle's model beside a second one (`--compare`, else the other
family: a GPT-2-family bundle beside SmolLM2-135M-Instruct, a Llama-style one beside GPT-2 small).
The second model's numbers come from its own bundle when the build attached one (`bundle.compare`,
extracted from the same prompt: data/arch, the request layer), else from its shape, its own
tokenizer on the same prompt and its ledger alone (no weights: nothing predicted). `pair(bundle)`
builds both sides once; the scene and the narration read the same dictionaries, so screen and voice
agree by construction. Every figure is a pure function of the bundles, the shapes and the ledgers
(data/flops.py); predictions are compared only where both sides have real weights.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from onepass.data import arch, home
from onepass.data.arch.spec import Shape
from onepass.data.flops import Ledger, forward_ledger, kv_cache_numbers_per_token, parameter_counts

GPT2 = "gpt2"
MODERN = "smollm2-135m-instruct"
# the four changes, in the order the chapter takes them; each is a component of spec.Shape
CHANGES = ("norm", "positions", "mlp", "attention")


def default_compare(bundle) -> str:
    """The model a bundle is set beside when none is named: the other family's small model."""
    return MODERN if bundle.shape.has_position_table else GPT2


@dataclass(frozen=True)
class Side:
    """One model of the pair as the chapter shows it."""
    name: str | None            # its --model name (None: a shape outside the registry, the tiny test model)
    shape: Shape
    tokens: tuple[str, ...]     # the prompt as its own tokenizer cuts it
    ledger: Ledger              # one forward pass over those tokens
    weights: str                # "real", "synthetic" (random numbers) or "none" (its shape only)
    top: tuple[str, float] | None   # its most likely next token and probability (real weights only)

    @property
    def T(self) -> int:
        return len(self.tokens)

    @property
    def params(self) -> int:
        return parameter_counts(self.shape)["total"]

    @property
    def flops_per_token(self) -> int:
        """One pass over the prompt, per token read (the ledger's total / T, rounded)."""
        return int(round(self.ledger.total / self.T))

    @property
    def kv_per_token(self) -> int:
        return kv_cache_numbers_per_token(self.shape)


def side_of_bundle(bundle) -> Side:
    weights = "synthetic" if bundle.synthetic else "real"
    top = None
    if not bundle.synthetic:
        p = bundle.last_probs
        i = int(np.argmax(p))
        top = (bundle.tokenizer.readable(i), float(p[i]))
    name = bundle.model
    if name is None and bundle.arch != "gpt2":     # a Llama-style model's small synthetic version: its card's name
        name = (bundle.meta.get("model_card") or {}).get("name")
    return Side(name, bundle.shape, tuple(bundle.tokens), bundle.ledger(), weights, top)


@lru_cache(maxsize=8)
def side_of_model(name: str, prompt: str) -> Side:
    """A model known only by its shape: its own tokenizer on the prompt, its ledger, no weights."""
    card = arch.model(name)
    shape = card.shape()
    # the model's tokenizer as extraction builds it (a GGUF's kept in the cache: built once, not per process)
    tok = arch.of(shape).tokenizer(card, None, cache=home.tokenizers_dir()) if shape.arch != "gpt2" \
        else arch.of(shape).tokenizer(card)
    ids = tok.encode(prompt)
    texts = tuple(tok.readable(i) for i in ids)
    return Side(name, shape, texts, forward_ledger(shape, len(ids)), "none", None)


def other_side(bundle) -> Side:
    """The second model: its bundle's numbers when one was attached, else its shape's."""
    other = getattr(bundle, "compare", None)
    if other is not None:
        return side_of_bundle(other)
    return side_of_model(default_compare(bundle), bundle.prompt)


def pair(bundle) -> tuple[Side, Side]:
    """(older, newer): the side with a position table (GPT-2's design) first, so the chapter reads
    from what GPT-2 did to what replaced it; the rendered bundle first when both are alike."""
    ours, theirs = side_of_bundle(bundle), other_side(bundle)
    if theirs.shape.has_position_table and not ours.shape.has_position_table:
        return theirs, ours
    return ours, theirs


def predictions_compared(old: Side, new: Side) -> bool:
    return old.top is not None and new.top is not None


def _layer_sum(ledger: Ledger, suffix: str) -> int:
    return sum(e.flops for e in ledger.entries if e.key.endswith(suffix) and e.key.startswith("L0."))


def change_facts(side: Side) -> dict:
    """Each change's numbers for one side: its component, parameters it costs, FLOPs it costs per token."""
    s, counts = side.shape, parameter_counts(side.shape)
    d, L = s.n_embd, s.n_layer
    rope_flops = sum(e.flops for e in side.ledger.entries if e.key.endswith(".rope"))
    positions_flops = sum(e.flops for e in side.ledger.entries if e.key == "positions")
    matrices = 3 if s.mlp == "swiglu" else 2
    mlp_layer = _layer_sum(side.ledger, ".mlp_gate") + _layer_sum(side.ledger, ".mlp_up") \
        + _layer_sum(side.ledger, ".mlp_down")
    mlp_all = sum(e.flops for e in side.ledger.entries if ".mlp_" in e.key)
    kv_proj = 2 * 2 * d * s.kv_heads * s.d_head            # k and v projections of one token in one layer
    return {
        "norm": {"kind": s.norm, "params": counts["layernorms"], "per_norm": 2 * d if s.norm == "layernorm" else d,
                 "count": 2 * L + 1},
        "positions": {"kind": s.positions, "table_params": counts["wpe"], "rows": s.n_positions if counts["wpe"] else 0,
                      "flops_per_token": int(round((rope_flops + positions_flops) / side.T)),
                      "context": s.n_positions},
        "mlp": {"kind": s.mlp, "matrices": matrices, "d_ff": s.d_ff, "d": d, "ratio": s.d_ff / d,
                "params_layer": counts["mlp_per_layer"],
                "flops_layer_token": int(round(mlp_layer / side.T)),
                "share": mlp_all / side.ledger.total},
        "attention": {"heads": s.n_head, "kv_heads": s.kv_heads, "group": s.group, "d_head": s.d_head,
                      "kv_proj_flops": kv_proj, "kv_per_token": side.kv_per_token},
    }


def same_width_mlp(side: Side) -> float:
    """The width of a three-matrix MLP costing what GPT-2's two at 4·d cost, as a multiple of d (8/3)."""
    return 2 * 4 / 3


def scale_rows(old: Side, new: Side) -> list[dict]:
    """The three sizes drawn to one scale per row: parameters, FLOPs per token, KV cache per token."""
    rows = []
    for key, a, b in (("params", old.params, new.params),
                      ("flops", old.flops_per_token, new.flops_per_token),
                      ("kv", old.kv_per_token, new.kv_per_token)):
        top = max(a, b)
        rows.append({"key": key, "old": a, "new": b, "old_frac": a / top, "new_frac": b / top,
                     "ratio": b / a if a else float("inf")})
    return rows


def pair_facts(bundle) -> dict:
    """Everything chapter 07 shows and says, once."""
    old, new = pair(bundle)
    return {"old": old, "new": new, "old_changes": change_facts(old), "new_changes": change_facts(new),
            "rows": scale_rows(old, new), "predictions": predictions_compared(old, new),
            "same_width": same_width_mlp(old)}
