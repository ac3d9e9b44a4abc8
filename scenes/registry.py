"""Which scenes make up each chapter, in order. Chapters not yet built are absent."""
from __future__ import annotations

import importlib

CHAPTER_MODULES = {
    "00": ("scenes.ch00_tokens", "Tokens"),
    "01": ("scenes.ch01_embeddings", "Embeddings and positions"),
    "02": ("scenes.ch02_attention", "One attention head"),
    "03": ("scenes.ch03_stack", "The full stack"),
    "04": ("scenes.ch04_vote", "The vote"),
    "05": ("scenes.ch05_encoder_decoder", "Encoder vs decoder"),
    "06": ("scenes.ch06_loop", "The loop"),
}


def chapters() -> dict[str, str]:
    return {k: title for k, (_, title) in sorted(CHAPTER_MODULES.items())}


def scenes_of(chapter: str) -> list[type]:
    module = importlib.import_module(CHAPTER_MODULES[chapter][0])
    return list(module.SCENES)
