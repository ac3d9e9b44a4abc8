"""Pictures that follow the words: each sentence of a beat brings its own step.

`say(scene, beat, at, *animations)` holds the picture until a point of the line, then plays the step
that shows what is being said there. `at` is a phrase (the step lands where the phrase is spoken, by its place in its
sentence), (sentence index, fraction of it) or a tuple of words with a fraction ((("On the right",),
0.0): `find` picks the sentence that says them, so a line's real- and random-weights wordings
both work).

A step must change enough of the frame for a viewer to see it (and for the review's still detector,
ffmpeg freezedetect at noise 0.001, to count it): a small label fading in is not a step; a filled
highlight behind the thing named (`glow`), a growing bar, an arrow or a column appearing is.
"""
from __future__ import annotations

from manim import FadeIn, FadeOut, SurroundingRectangle, Transform, Wait

from scenes import style as S


def glow(mob, color=S.TOKEN, buff: float = 0.1, opacity: float = 0.22, stroke: float = 3.0):
    """A filled, outlined box over `mob`: the thing a sentence names, lit up."""
    return SurroundingRectangle(mob, color=color, buff=buff, stroke_width=stroke, fill_color=color,
                                fill_opacity=opacity, corner_radius=0.08)


def find(beat, *words: str) -> int:
    """The first sentence that says all `words` (case-insensitive); the last sentence if none does."""
    return beat.find(*words)


def wait_until(beat, i: int, fraction: float = 0.0) -> None:
    """Hold the picture until `fraction` of sentence i has been spoken."""
    beat.wait_until(i, fraction)


def said(beat, phrase: str) -> tuple[int, float]:
    """Where `phrase` is spoken: (the sentence that says it, how far into it by characters), or the
    start of the last sentence when no sentence says it."""
    for i, s in enumerate(beat.sentences):
        k = s["text"].lower().find(phrase.lower())
        if k >= 0:
            return i, k / max(1, len(s["text"]))
    return len(beat.sentences) - 1, 0.0


def says(beat, phrase: str) -> bool:
    return any(phrase.lower() in s["text"].lower() for s in beat.sentences)


def when(beat, at) -> tuple[int, float]:
    """(sentence, fraction) for `at`: a phrase (where it is spoken), i, (i, f) or ((words...), f)."""
    if isinstance(at, str):
        return said(beat, at)
    if isinstance(at, int):
        return at, 0.0
    first, frac = at
    if isinstance(first, (tuple, list)):
        return find(beat, *first), frac
    if isinstance(first, str):
        return find(beat, first), frac
    return int(first), float(frac)


def say(scene, beat, at, *animations, share: float = 0.35, run_time: float | None = None):
    """Hold until `at` in the line, then play `animations` over `share` of that sentence's rest."""
    i, frac = when(beat, at)
    wait_until(beat, i, frac)
    if animations:
        scene.play(*animations, run_time=run_time if run_time is not None else min(1.5, beat.span(i, share)))


class Pointer:
    """One highlight that moves to whatever is being said: `to(mob)` is the animation that brings it
    there (fading in the first time), `off()` the one that takes it away."""

    def __init__(self, color=S.TOKEN, buff: float = 0.08, opacity: float = 0.15):
        self.color, self.buff, self.opacity = color, buff, opacity
        self.box = None

    def to(self, mob, color=None):
        target = glow(mob, color=color or self.color, buff=self.buff, opacity=self.opacity)
        if self.box is None:
            self.box = target
            return FadeIn(target)
        return Transform(self.box, target)

    def off(self):
        box, self.box = self.box, None
        return FadeOut(box) if box is not None else Wait(0.01)
