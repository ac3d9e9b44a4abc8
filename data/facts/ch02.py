"""Chapter 02 facts: one attention head of the first layer (also chapters 03 and 05's head)."""
from __future__ import annotations

import numpy as np


def head_facts(bundle) -> dict:
    """The featured head and its last-row readout (shared by the scenes and the script)."""
    head = bundle.featured_head(layer=0)
    row = bundle["probs"][0, head, -1].astype(np.float64)   # [T]
    top = int(np.argmax(row))
    return {"head_index": head, "row": row, "top_index": top}
