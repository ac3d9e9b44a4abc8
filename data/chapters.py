"""The film's chapters, in order: number -> the title its files are named by and the scene module
that draws it.

This is the one place chapter order is written. The title here names files (ch02-one-attention-
head.mp4) and is the same in every language; the title a viewer reads is the catalog's
`chapter-NN` (words/catalogs). It sits at the bottom of the
layers (render.py -> film/ -> scenes/ -> voiceover/ -> words/ -> data/), so the scene module is
named as a string: scenes/registry.py imports it, nothing here does.
"""
from __future__ import annotations

from typing import NamedTuple


class Chapter(NamedTuple):
    title: str
    module: str    # the scenes module (importable name) whose SCENES make up the chapter
    in_film: bool = True     # part of --all's film (chapter 07 renders only when asked for)
    compares: bool = False   # sets the bundle's model beside a second one (--compare; data/facts/ch07.py)


CHAPTERS: dict[str, Chapter] = {
    "00": Chapter("Tokens", "onepass.scenes.ch00_tokens"),
    "01": Chapter("Embeddings and positions", "onepass.scenes.ch01_embeddings"),
    "02": Chapter("One attention head", "onepass.scenes.ch02_attention"),
    "03": Chapter("The full stack", "onepass.scenes.ch03_stack"),
    "04": Chapter("The vote", "onepass.scenes.ch04_vote"),
    "05": Chapter("Encoder vs decoder", "onepass.scenes.ch05_encoder_decoder"),
    "06": Chapter("The loop", "onepass.scenes.ch06_loop"),
    # GPT-2's film is 00-06; chapter 07 sets two models side by side and is rendered when asked for
    "07": Chapter("What changed since GPT-2", "onepass.scenes.ch07_changes", in_film=False, compares=True),
}


def titles() -> dict[str, str]:
    """chapter -> title, in film order."""
    return {k: c.title for k, c in sorted(CHAPTERS.items())}


def film_chapters() -> list[str]:
    """The chapters `--all` renders and joins into the film (00-06: chapter 07 only when asked for)."""
    return [k for k, c in sorted(CHAPTERS.items()) if c.in_film]


def compares(chapter: str) -> bool:
    """Whether a chapter's scenes read a second model's bundle (their cache key and scene inputs name it)."""
    c = CHAPTERS.get(chapter)
    return bool(c and c.compares)
