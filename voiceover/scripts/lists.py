"""Several things said in one breath, as every chapter's script says them: '“sat”, “on” and “the”',
joined by the catalog's words (kit:list-comma, kit:list-and), and how many of a row's values a
description reads aloud (the rest are in the transcript's tables)."""
from __future__ import annotations

SAID_TOP = 3        # a description says a row's largest shares (and the best keys' scores): this many


def said_list(items, words) -> str:
    """A spoken list, '“sat”, “on” and “the”' or '6, 7 and 8'."""
    items = [str(i) for i in items]
    if len(items) == 1:
        return items[0]
    head = items[0]
    for item in items[1:-1]:
        head = words.text("kit:list-comma", a=head, b=item)
    return words.text("kit:list-and", a=head, b=items[-1])
