"""The check every chapter's step tests share: the picture follows the words.

A scene dry-run with the silent voice times every sentence from its words, and ChapterScene
records every play in `scene.timeline` as (start, end, only_waited); so what the viewer sees
while a sentence is spoken is checked without rendering. The rendered check is bench/review.py.
"""
from __future__ import annotations

STILL = 4.0     # bench/review.py's rule: a picture held this long while the voice talks is a still


def holds(timeline) -> list[tuple[float, float]]:
    """Stretches in which the picture only held (consecutive waits), as (start, end)."""
    out, run = [], None
    for start, end, still in timeline:
        if still:
            run = (run[0], end) if run else (start, end)
        else:
            if run:
                out.append(run)
            run = None
    return out + ([run] if run else [])


def assert_picture_follows_words(scene, name: str):
    """Every spoken sentence starts a visible step, and no hold reaches STILL seconds."""
    steps = [start for start, _, still in scene.timeline if not still]
    for cue in scene.cues:
        for k, seg in enumerate(cue["segments"]):
            assert any(seg["start"] - 0.05 <= t < seg["end"] for t in steps), (
                f"{name}/{cue['beat']}: nothing on screen changes while sentence {k + 1} is spoken: "
                f"{seg['text']!r}")
    longest = max((b - a for a, b in holds(scene.timeline)), default=0.0)
    assert longest < STILL, f"{name}: the picture holds {longest:.1f} s"

