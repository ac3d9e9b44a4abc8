"""Chapter 05 facts: encoder vs decoder. Same scores, with and without the triangle.

The grid facts (which rows change, by how much) are computed from the bundle's own scaled
scores; the model families and the original paper are as the seeds name them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# A row "changes" when some weight in it moves by at least this much: the smallest step a
# percentage with one decimal can show (0.1 percentage points).
VISIBLE_CHANGE = 0.0005

# The original Transformer, as the seeds cite it (Vaswani et al., "Attention Is All You Need").
ORIGINAL_YEAR = 2017
ORIGINAL = f"Attention Is All You Need ({ORIGINAL_YEAR})"


@dataclass(frozen=True)
class Family:
    name: str
    mask: str              # "none" (sees everything), "causal" (the triangle), "both"
    examples: tuple[str, ...]
    can: tuple[str, ...]   # short lines, each fits a third of the frame
    cannot: tuple[str, ...]


# Example models per family, as named in the seeds (000 chapter 05; 004 "Three families").
FAMILIES = (
    Family("encoder-only", "none", ("BERT", "embedding models for search"),
           ("reads in both directions:", "understands, classifies"), ("cannot write text",)),
    Family("decoder-only", "causal", ("GPT-2 (this film)", "GPT-3", "LLaMA", "Qwen3"),
           ("writes one token at a time",), ("never sees a later token",)),
    Family("encoder-decoder", "both", ("the 2017 Transformer", "T5", "BART", "Whisper"),
           ("reads one text,", "writes another"), ("two towers to train and run",)),
)


# Where each example model's architecture is published: the film lists a model as a family's example
# only when its design is a fact on record (a paper, a technical report or a released config), never
# a model whose architecture its maker has not published. A class of models is not a model.
ARCHITECTURE_SOURCES = {
    "BERT": "Devlin et al. 2019, BERT: Pre-training of Deep Bidirectional Transformers",
    "GPT-2 (this film)": "Radford et al. 2019, Language Models are Unsupervised Multitask Learners; released weights",
    "GPT-3": "Brown et al. 2020, Language Models are Few-Shot Learners",
    "LLaMA": "Touvron et al. 2023, LLaMA: Open and Efficient Foundation Language Models",
    "Qwen3": "Qwen3 Technical Report (2025); released weights and config.json",
    "the 2017 Transformer": "Vaswani et al. 2017, Attention Is All You Need",
    "T5": "Raffel et al. 2020, Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer",
    "BART": "Lewis et al. 2020, BART: Denoising Sequence-to-Sequence Pre-training",
    "Whisper": "Radford et al. 2022, Robust Speech Recognition via Large-Scale Weak Supervision",
}
MODEL_CLASSES = ("embedding models for search",)


def unsourced_examples(families=FAMILIES) -> list[str]:
    """The families' examples that are neither a model with a published architecture nor a class of models."""
    return [e for f in families for e in f.examples if e not in ARCHITECTURE_SOURCES and e not in MODEL_CLASSES]


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def mask_facts(bundle, layer: int = 0) -> dict:
    """The featured head's weights with the causal mask (the bundle's own) and without it.

    `full` is the row softmax of the very same scaled scores, nothing masked.
    """
    head = bundle.featured_head(layer=layer)
    scores = bundle["scores_scaled"][layer, head].astype(np.float64)      # [T, T]
    causal = bundle["probs"][layer, head].astype(np.float64)              # [T, T], the model's own
    full = _softmax_rows(scores)
    delta = full - causal
    row_change = np.abs(delta).max(axis=-1)                               # [T]
    changed = [int(r) for r in np.flatnonzero(row_change >= VISIBLE_CHANGE)]
    big_r, big_c = (int(i) for i in np.unravel_index(np.argmax(np.abs(delta)), delta.shape))
    return {"head_index": head, "scores": scores, "causal": causal, "full": full, "delta": delta,
            "row_change": row_change, "changed": changed, "big_row": big_r, "big_col": big_c}
