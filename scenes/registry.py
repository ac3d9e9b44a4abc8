"""Which scenes make up each chapter, in order. Titles, order and module names are written
once, in data/chapters.py; this module imports the scene modules they name."""
from __future__ import annotations

import importlib

from onepass.data.chapters import CHAPTERS, titles


def chapters() -> dict[str, str]:
    """chapter -> title, in film order."""
    return titles()


def scenes_of(chapter: str) -> list[type]:
    module = importlib.import_module(CHAPTERS[chapter].module)
    return list(module.SCENES)
