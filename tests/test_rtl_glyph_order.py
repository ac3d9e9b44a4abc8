"""Numbers and isolates inside an Urdu line, as drawn: the glyphs' x order, not the string.

A string can be right (⁦−∞⁩ in the catalog) and its drawing wrong; these tests draw the line through
label() with the film's right-to-left direction on, find the glyphs of the characters that matter by
their outlines (each drawn alone in the same face and size), and read them left to right.
"""
from __future__ import annotations

import numpy as np
from manim import Text

from onepass.engine.text import glyphs_of
from onepass.scenes import style as S
from onepass.scenes.text import isolate_numbers, label
from onepass.words import numbers as N
from onepass.words.catalog import Words


def drawn_order(text: str, chars: str, size: int = S.SMALL) -> str:
    """`chars` as they appear in the drawn label, left to right (each glyph matched by its outline)."""
    size = max(size, S.SMALL)
    glyphs = glyphs_of(label(text, size))
    found = []
    for c in dict.fromkeys(chars):
        ref = glyphs_of(Text(c, font=S.RTL_FACE, font_size=size))[0]
        shape = ref.points - ref.get_center()
        tol = 0.02 * max(ref.width, ref.height)
        for g in glyphs:
            if len(g.points) == len(shape) and np.allclose(g.points - g.get_center(), shape, atol=tol):
                found.append((g.get_center()[0], c))
    return "".join(c for _, c in sorted(found))


def urdu():
    S.set_direction("ur")
    N.set_language("ur")
    return Words.load("ur")


def test_the_ch05_verdict_draws_minus_infinity_with_its_sign_on_the_left():
    words = urdu()
    verdict = words.text("ch05:verdict")
    assert "\u2066−∞\u2069" in verdict
    assert drawn_order(verdict, "−∞") == "−∞"


def test_a_percentage_after_urdu_words_keeps_its_percent_sign_on_the_right():
    """ch05's biggest shift, '{was} ← {now}': after Arabic letters the bidi algorithm reads the digits
    as Arabic numbers (W2), which do not take their % along: it drew '%35.1 ← %0.0'."""
    words = urdu()
    was, now = N.fmt_pct(0.351), N.fmt_pct(0.0)
    line = words.text("ch05:biggest-shift", row="\u2066a\u2069", col="\u2066b\u2069", was=was, now=now)
    assert f"{was} ← {now}" in line
    # right to left: 35.1% first (on the right), then 0.0%; each number reads left to right
    assert drawn_order(line, "0135%") == "00%351%"
    assert drawn_order("وزن: " + was, "135%") == "351%"
    assert drawn_order("کم " + N.fmt_signed(-5.0, 0) + " ہے", "−5") == "−5"


def test_only_bare_numbers_after_arabic_letters_are_isolated():
    assert isolate_numbers("وزن: 35.1% ← 0.0%") == "وزن: \u206635.1%\u2069 ← \u20660.0%\u2069"
    assert isolate_numbers("فرق: \u2066−∞\u2069 کی") == "فرق: \u2066−∞\u2069 کی"       # already isolated
    assert isolate_numbers("قطار \u20663\u2069، کالم") == "قطار \u20663\u2069، کالم"
    assert isolate_numbers("GPT-2 کا") == "GPT-2 کا"          # a Latin name keeps its number
    assert isolate_numbers("کا GPT-2") == "کا GPT-2"
    assert isolate_numbers("35.1% ← 0.0%") == "35.1% ← 0.0%"   # no Arabic letter before it


def test_a_times_sign_written_after_a_number_stays_after_it():
    """ch01's 'slow pairs 32× slower' (SmolLM2, Urdu): a bare '32×' among Urdu words drew as '×32' (the digits an
    Arabic number, the sign a neutral that took the line's direction); isolated with its sign it reads 32×."""
    urdu()
    assert isolate_numbers("سست جوڑے 32× اور سست") == "سست جوڑے \u206632×\u2069 اور سست"
    assert isolate_numbers("کا \u206632×\u2069 اور") == "کا \u206632×\u2069 اور"          # already isolated
    assert isolate_numbers("کا 32 × 64") == "کا \u206632\u2069 × \u206664\u2069"          # a spaced × is an operator
    assert drawn_order("سست جوڑے 32× اور سست", "32×") == "32×"
    words = urdu()
    # right to left: Llama 3.2 first (on the right), then 32× on its left
    assert drawn_order(words.text("ch01:stretched", factor=N.fmt_int(32)), "32×") == "32×32"
