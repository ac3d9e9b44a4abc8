"""The architectures onepass explains, one folder each, registered in ARCHITECTURES.

An architecture is a module (data/arch/<name>/__init__.py) with these names, GPT-2's included:

    NAME, TITLE          its registry key and its name in words
    MODELS, DEFAULT      --model name -> model card (config(), mini_config(), tiny_config(), shape(),
                         hub, weights_from, gated), and the one its synthetic weights default to
    shape_of(config)     its transformers config (a dict) as the uniform spec.Shape
    family_of(config)    the card a weights folder's config.json is, or None
    load(source, local_only[, model]), synthetic_model(...)   the torch model
    capture(model, ids) -> captures; derive(captures, ids, shape) -> the bundle's tensors;
    cross_check(tensors, captures) -> checks; lens_logits(model, h); shape_config(model[, shape])
    ledger_items(shape, T), parameter_counts(shape)            its ledger and parameter counts
    tokenizer(model)     its tokenizer (encode, decode, token_texts, readable, vocab_size)

Everything above data/arch asks the bundle's Shape about components, never about a model's name.
docs/HACKING.md says how to add an architecture.
"""
from __future__ import annotations

from onepass.data.arch import gpt2, llama
from onepass.data.arch.base.spec import Shape

ARCHITECTURES = {gpt2.NAME: gpt2, llama.NAME: llama}


class UnknownModel(LookupError):
    """A --model onepass does not know; the message lists those it does (data/models.py turns it into
    the user-facing models.UnknownModel)."""


def all_models() -> dict:
    """Every model of every architecture, by --model name (GPT-2's family first)."""
    return {name: m for a in ARCHITECTURES.values() for name, m in a.MODELS.items()}


def model(name: str):
    try:
        return all_models()[name]
    except KeyError:
        listed = "; ".join(f"{a.TITLE}: {', '.join(a.MODELS)}" for a in ARCHITECTURES.values())
        raise UnknownModel(f"unknown model {name!r}; onepass knows {listed} (--list-models)") from None


def of(thing) -> object:
    """The architecture of a Shape, a model card or an architecture name."""
    name = thing if isinstance(thing, str) else thing.arch
    try:
        return ARCHITECTURES[name]
    except KeyError:
        raise UnknownModel(f"unknown architecture {name!r}; onepass knows {', '.join(ARCHITECTURES)}") from None


def family_of(config: dict):
    """The model card a config.json describes (any architecture), or None."""
    for a in ARCHITECTURES.values():
        found = a.family_of(config)
        if found is not None:
            return found
    return None


__all__ = ["ARCHITECTURES", "Shape", "UnknownModel", "all_models", "model", "of", "family_of"]
