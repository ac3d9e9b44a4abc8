"""Words as a native speaker says and reads them, in every language: one term for one concept
(words/glossary.tsv), what the voice is given (words/lexicon), numbers once the values are in
(words/numbers.py spoken_*), ordinals, signs in right-to-left text, and the deck's help."""
from __future__ import annotations

import pytest

from words import glossary

TRANSLATIONS = ("es", "ur")


# -- one term for one concept -------------------------------------------------------------
def test_glossary_is_well_formed():
    rows = glossary.terms()
    assert len(rows) >= 30
    assert len({t.en.lower() for t in rows}) == len(rows), "a concept has two rows"
    for t in rows:
        for lang in TRANSLATIONS:
            assert t.forms.get(lang), f"{t.en}: no {lang} term"
    for lang in TRANSLATIONS:
        terms = {t.forms[lang][0] for t in rows}
        for a in glossary.avoided():
            if a.lang == lang:
                assert a.avoid not in terms, f"{a.avoid!r} is both a term and avoided"


@pytest.mark.parametrize("lang", TRANSLATIONS)
@pytest.mark.parametrize("name", ["kit.po", "film.po"])
def test_kit_and_film_use_the_glossary(lang, name):
    found = glossary.violations(lang, glossary.catalog_messages(lang, name))
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lang, english, bad, good", [
    ("ur", "queries, keys and values", "کوئریز، کیز اور ویلیوز", "کوئریز، کلیدیں اور ویلیوز"),
    ("ur", "the residual stream", "ریزیجوئل اسٹریم", "ریزیجول اسٹریم"),
    ("ur", "unembedding", "ان ایمبیڈنگ", "اَن ایمبیڈنگ"),
    ("es", "a softmax turns scores into probabilities", "un softmax convierte puntuaciones en probabilidades",
     "una softmax convierte puntuaciones en probabilidades"),
    ("es", "the KV cache", "el cache de claves", "la caché KV"),
])
def test_the_glossary_check_can_fail(lang, english, bad, good):
    assert glossary.violations(lang, {"x": (english, bad)}), f"{bad!r} passed the glossary check"
    assert not glossary.violations(lang, {"x": (english, good)}), f"{good!r} failed the glossary check"


def test_glossary_ignores_placeholders_and_markers():
    english = 'Each <bookmark mark="key"/>value is {value}.'
    assert not glossary.violations("es", {"x": (english, 'Cada <bookmark mark="key"/>valor es {value}.')})
    assert glossary.violations("es", {"x": (english, 'Cada <bookmark mark="key"/>número es {value}.')})
