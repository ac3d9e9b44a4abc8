"""Every model onepass can explain, by --model name, across the architectures of data/arch.

FAMILY is GPT-2's family (chapter 06 draws it beside GPT-3); MODELS is every architecture's models,
GPT-2's first. The shapes themselves live in each architecture's folder (data/arch/<name>/models.py).
"""
from __future__ import annotations

from onepass.data.arch import UnknownModel, all_models, family_of as _family_of, model as _model
from onepass.data.arch.gpt2.models import DEFAULT, FAMILY, MINI_HEAD_WIDTH, N_POSITIONS, VOCAB, Model

MODELS = all_models()

__all__ = ["DEFAULT", "FAMILY", "MINI_HEAD_WIDTH", "MODELS", "Model", "N_POSITIONS", "VOCAB", "UnknownModel",
           "get", "family_of", "member_name"]


def get(name: str):
    """The model card `name` (any architecture); UnknownModel lists every model onepass knows."""
    return _model(name)


def family_of(config: dict):
    """The model (any architecture) with this config's architecture (a weights directory's config.json), or None."""
    return _family_of(config)


def member_name(config: dict | None) -> str | None:
    """The --model name of the model with this architecture (family_of), or None."""
    found = family_of(config or {})
    return found.name if found else None
