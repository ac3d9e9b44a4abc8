"""One of each (issue 42 item 6): knowledge that lived in two places now lives in one, and the
places that used both still agree."""
from __future__ import annotations

from film import handout


def test_handout_ledger_says_each_step_as_the_meter_does(built, tiny_bundle):
    """The handout's ledger rows name every step with the words the scene's Σ FLOPs meter shows
    for it, MLP widths (d, d_ff) included (data.flops.Entry.message, read from bundle.shape)."""
    scene = built("02", "Projections")
    for e in tiny_bundle.ledger().entries:
        assert handout.step_words(e, tiny_bundle, scene.words) == scene.step_text(e.key), e.key
