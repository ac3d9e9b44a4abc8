"""Chapters 00, 01 and 06: the picture follows the words.

Every scene is dry-run (conftest.build_scene, draw=False) with the silent voice, which times each
sentence from its words; every play is recorded (start, end, whether it only held the picture), so
what the viewer sees while a sentence is spoken is checked without rendering. The rendered check is
bench/review.py (`make review`): the share of stills of 4 s or more and the longest.
"""
from __future__ import annotations

import pytest
from manim import Wait

import scenes.base as base
from tests.conftest import build_scene

SCENES = [("00", "Prompt"), ("00", "SameWord"), ("00", "Merges"), ("00", "Compression"),
          ("01", "Lookup"), ("01", "Meaning"), ("01", "Positions"), ("01", "Residual"),
          ("06", "Loop"), ("06", "Cache"), ("06", "Square"), ("06", "Scale")]
STILL = 4.0     # bench/review.py's rule: a picture held this long while the voice talks is a still


def recorded_build(bundle, chapter, name, monkeypatch):
    """The scene, with `.plays` = [(start, end, only_waited)]."""
    plays = []
    original_play = base.ChapterScene.play

    def play(self, *animations, **kwargs):
        start = self.time
        out = original_play(self, *animations, **kwargs)
        plays.append((start, self.time, all(isinstance(a, Wait) for a in animations)))
        return out
    monkeypatch.setattr(base.ChapterScene, "play", play)
    scene = build_scene(bundle, chapter, name, draw=False)
    scene.plays = plays
    return scene


def holds(plays) -> list[tuple[float, float]]:
    """Stretches in which the picture only held (consecutive waits), as (start, end)."""
    out, run = [], None
    for start, end, still in plays:
        if still:
            run = (run[0], end) if run else (start, end)
        else:
            if run:
                out.append(run)
            run = None
    return out + ([run] if run else [])


@pytest.mark.parametrize("chapter,name", SCENES)
def test_every_sentence_brings_its_own_step_and_no_picture_is_held_for_long(tiny_bundle, monkeypatch, chapter, name):
    scene = recorded_build(tiny_bundle, chapter, name, monkeypatch)
    steps = [start for start, _, still in scene.plays if not still]
    for cue in scene.cues:
        for k, seg in enumerate(cue["segments"]):
            assert any(seg["start"] - 0.05 <= t < seg["end"] for t in steps), (
                f"{name}/{cue['beat']}: nothing on screen changes while sentence {k + 1} is spoken: "
                f"{seg['text']!r}")
    longest = max((b - a for a, b in holds(scene.plays)), default=0.0)
    assert longest < STILL, f"{name}: the picture holds {longest:.1f} s"


def test_holds_are_measured_from_the_plays():
    """The check above can fail: a scene that only waits is one long hold."""
    assert holds([(0.0, 1.0, False), (1.0, 3.0, True), (3.0, 5.5, True), (5.5, 6.0, False)]) == [(1.0, 5.5)]
