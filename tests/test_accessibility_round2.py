"""Accessibility round 2 (issue 53, items 2-5): the deck's audio description in a browser with no
speech voice, captions in the PowerPoint's videos, the described cut's captions, the deck at 400 %.

The deck is driven in Debian's Chromium (Playwright's `executable_path`), as tests/test_lecture.py
drives it, with no stand-in for its speech engine: this Chromium has no speech voice installed, so
what a student meets on such a machine is what the test meets.
"""
from __future__ import annotations

import json
import math
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from onepass.film.kit import clips, describe, slides
from onepass.voiceover import audio, captions, captions_check
from onepass.voiceover.descriptions import Piece
from onepass.words.catalog import Words
from tests.test_lecture import CHROMIUM, Chapter02, frame_of

LABEL = "[Description] {}".format


# ---------------------------------------------------------------------------------------------
# Item 4: the described cut's captions

def _hold(at: float, seconds: float, text: str, rate: Fraction, label=LABEL) -> describe.Hold:
    segs = [{"start": 0.0, "end": seconds, "text": text}]
    blocks = describe.hold_captions(segs, label)
    length = max([seconds] + [b["end"] for b in blocks])
    return describe.Hold(at, int(round(at * rate)), max(1, math.ceil(length * rate - 1e-6)), None, segs,
                         [Piece("b", None, text, at)], seconds, blocks)


def test_a_narration_caption_a_hold_interrupts_resumes_after_it():
    """The case `mix@scale` showed: a hold 0.04 s into a 3 s caption left a 0.04 s cue and the
    voice's next 3 s uncaptioned. Now the scrap's words go on after the hold, and the caption
    covers the voice there; a cue cut in two long parts shares its words between them."""
    rate = Fraction(15)
    standard = [{"start": 10.0, "end": 13.0, "text": "The scaled scores are\nmixed by the softmax weights."},
                {"start": 20.0, "end": 24.0, "text": "One two three four five six\nseven eight nine ten."}]
    holds = [_hold(10.04, 2.0, "A grid of five by five cells.", rate),
             _hold(22.0, 1.5, "The last row lights up.", rate)]
    cues = describe.described_cues(standard, holds, rate, LABEL, until=60.0)
    narration = [c for c in cues if not c.get("description")]
    h0 = holds[0].frames / 15
    # no scrap before the first hold; the whole caption after it, from where the voice resumes
    assert all(c["end"] - c["start"] >= captions.MIN_SECONDS - 1e-6 for c in cues), cues
    first = [c for c in narration if "scaled" in c["text"] or "softmax" in c["text"]]
    assert len(first) == 1 and first[0]["start"] == pytest.approx(10.04 + h0, abs=1e-6)
    assert first[0]["end"] >= 13.0 + h0 - 1e-6
    assert " ".join(first[0]["text"].split()) == "The scaled scores are mixed by the softmax weights."
    # the second cue is cut at 22.0 into two 2 s parts: its words shared, in order, none lost
    second = [c for c in narration if c["start"] > 15]
    assert len(second) == 2
    assert " ".join(" ".join(c["text"].split()) for c in second) == "One two three four five six seven eight nine ten."
    h1 = holds[1].frames / 15
    assert second[1]["start"] == pytest.approx(22.0 + h0 + h1, abs=1e-6)
    # every description block is marked, and nothing overlaps
    described = [c for c in cues if c.get("description")]
    assert described and all(c["text"].startswith("[Description]") for c in described)
    assert all(a["end"] <= b["start"] + 1e-6 for a, b in zip(cues, cues[1:])), cues


def test_every_block_of_a_long_description_is_marked_and_read_under_20_characters_a_second():
    """A description too long for one caption is cut into blocks that each carry the mark (not
    just the first), each fits 2 x 42 with it, and the hold lasts until they can be read: none at
    20 characters a second or faster, even when the voice says it faster than that."""
    rate = Fraction(25)
    text = ("The score grid fills in row by row, each row a query token, each column a key token, "
            "and the cells above the diagonal turn grey as the mask hides the future.")
    fast = len(text) / 24.0                         # said at 24 characters a second
    hold = _hold(5.0, fast, text, rate)
    blocks = hold.captions
    assert len(blocks) >= 2 and all(b["text"].startswith("[Description] ") for b in blocks)
    assert " ".join(b["text"].replace("[Description] ", "").replace("\n", " ") for b in blocks).split() == text.split()
    assert hold.frames / 25 >= blocks[-1]["end"] - 1e-6 and hold.frames / 25 > fast
    cues = describe.described_cues([], [hold], rate, LABEL, until=30.0)
    assert captions_check.failures(cues) == []
    assert all(captions.reading_chars(c["text"]) / (c["end"] - c["start"]) < captions.MAX_CPS for c in cues)
