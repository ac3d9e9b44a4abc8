"""Issue 52 item 3, Spanish and Urdu: a chapter number is said as a number ("capítulo 2", "باب 2",
"chapter 2", never "cero dos" / "صفر دو"), and captions never end inside a phrase (not on a lone
function word, not between a number and its unit, not before an Urdu postposition), in every chapter
of every stored language, within the caption limits."""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.helpers import run_main  # noqa: F401  (the helpers put the repository on the path)
from onepass.voiceover import captions, services
from onepass.voiceover.captions_check import Report, narration_cues
from onepass.voiceover.script import chapter_descriptions, chapter_lines
from onepass.words import lexicon
from onepass.words.catalog import Words

LANGS = ["en", "es", "ur"]
CHAPTERS = ["00", "01", "02", "03", "04", "05", "06", "07"]
VOICE = {"en": "en-us", "es": "es", "ur": "ur"}          # the espeak-ng voice each language's narration uses

# (a) -------------------------------------------------------------------------------------------


def chapter_word(lang: str) -> str:
    """The word a language says before a chapter's number: film:title-line's ("Capítulo {number}")."""
    said = Words.load(lang).text("film:title-line", number=7, title="x")
    return said.split("7")[0].strip()


def espeak(text: str, voice: str) -> str:
    """espeak-ng's phonemes for `text` (what the voice will say)."""
    return subprocess.run([services.espeak_binary(), "-q", "-x", "-v", voice, text],
                          capture_output=True, text=True, check=True, timeout=30).stdout.strip()


@pytest.mark.skipif(services.espeak_binary() is None, reason="espeak-ng is not installed")
@pytest.mark.parametrize("lang", LANGS)
def test_a_chapter_number_is_said_as_its_number_not_digit_by_digit(lang):
    word = chapter_word(lang)
    assert word.lower() in ("chapter", "capítulo", "باب")
    written = f"{word} 02"                         # as a heading writes the chapter
    said = lexicon.for_voice(written, VOICE[lang])
    assert re.search(r"\b2\b", said) and "02" not in said, said
    heard = espeak(said, VOICE[lang])
    assert heard == espeak(f"{word} 2", VOICE[lang])
    # the test can fail: the digits as written are read 'cero dos' / 'صفر دو' / 'zero two'
    assert espeak(written, VOICE[lang]) != heard
    # and a decimal or a time keeps its zeros
    assert lexicon.for_voice("0.05 00:05", VOICE[lang]).split()[-2:] == ["0.05", "00:05"]


def spoken_texts(bundle, lang: str):
    """(id, text) of everything the film's voice says in a language: every chapter's narration
    (its title line over the title card included) and its audio descriptions."""
    words = Words.load(lang)
    for ch in CHAPTERS:
        for beat, line in chapter_lines(ch, bundle, bundle.ledger(), words).items():
            yield f"ch{ch}-{beat}", line.text
        for beat, line in chapter_descriptions(ch, bundle, bundle.ledger(), words).items():
            yield f"ch{ch}-{beat}.describe", line.text


@pytest.mark.parametrize("lang", LANGS)
def test_every_spoken_chapter_number_reaches_the_voice_as_a_number(tiny_bundle, lang):
    word = chapter_word(lang)
    padded = re.compile(re.escape(word) + r"\s+[\u2066\u2067\u2068]?0\d", re.IGNORECASE)
    seen, wrong = 0, []
    for mid, text in spoken_texts(tiny_bundle, lang):
        if not re.search(re.escape(word) + r"\s+[\u2066\u2067\u2068]?\d", text, re.IGNORECASE):
            continue
        seen += 1
        said = lexicon.for_voice(text, VOICE[lang])
        if padded.search(said):
            wrong.append(f"{mid}: {said}")
    assert seen >= len(CHAPTERS)                       # every chapter's title line at least
    assert not wrong, "\n".join(wrong)


# (b) -------------------------------------------------------------------------------------------

# what a cue or a line must not end on, as the issue names them: per language
LONE = {"en": set("of the a to and in".split()),
        "es": set("de la el en y que a por con los las del un una".split()),
        "ur": set()}
POSTPOSITIONS = set("کا کی کے سے میں پر نے کو".split())
MARKS = dict.fromkeys(map(ord, "\u200e\u200f\u2066\u2067\u2068\u2069\u2060"))
NUMBER = re.compile(r"[−-]?\d(?:[\d.,]*\d)?%?")


def parted(lang: str, before: str, after: str) -> str | None:
    """Why a caption break between the words `before` and `after` parts a phrase; None if it does not."""
    last, first = before.translate(MARKS), after.translate(MARKS).strip(",،.۔:;؟?!«»\"")
    if last.lower() in LONE[lang]:
        return f"ends on the lone function word {last!r}"
    if lang == "ur" and NUMBER.fullmatch(last):
        return f"parts the number {last} from its unit {first!r}"
    if lang == "ur" and first in POSTPOSITIONS:
        return f"parts {last!r} from its postposition {first!r}"
    return None


def phrase_breaks(cues: list[dict], lang: str) -> list[str]:
    out = []
    for i, c in enumerate(cues):
        lines = c["text"].split("\n")
        for a, b in zip(lines, lines[1:]):                  # between a cue's lines
            why = parted(lang, a.split()[-1], b.split()[0])
            if why:
                out.append(f"line break {why}: {a!r} / {b!r}")
        if i + 1 < len(cues):                                # between one cue and the next
            nxt = cues[i + 1]["text"].split()[0]
            why = parted(lang, lines[-1].split()[-1], nxt)
            if why:
                out.append(f"cue {why}: {lines[-1]!r} | {nxt!r}")
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_the_splitter_keeps_phrases_whole(lang):
    text = {"en": "The sum of the scores is the share of the attention that each of the tokens gets from the "
                  "query, and it adds up to one in every row of the grid that the head draws.",
            "es": "La suma de las puntuaciones es la parte de la atención que cada uno de los tokens recibe de "
                  "la consulta, y suma uno en cada fila de la cuadrícula que dibuja la cabeza.",
            "ur": "سب سے بڑا احتمال ⁦32.8⁩ فیصد ہے اور یہ ٹوکن کی قطار میں سب سے اوپر ہے، جبکہ باقی ٹوکنز کو "
                  "بہت کم حصہ ملتا ہے اور ان کی قطاریں نیچے رہتی ہیں۔"}[lang]
    for seconds in (4.0, 9.0, 15.0):                        # one, two and three cues' worth of speech
        blocks = captions.caption_blocks({"start": 0.0, "end": seconds, "text": text})
        assert " ".join(" ".join(b["text"].split()) for b in blocks) == " ".join(text.split())
        assert phrase_breaks(blocks, lang) == []
        assert all(len(line) <= captions.LINE_CHARS for b in blocks for line in b["text"].split("\n"))


def test_a_phrase_breaks_where_nothing_else_fits():
    """A run of function words with no allowed break is still cut (the limits come first)."""
    text = " ".join(["de la"] * 40)
    blocks = captions.caption_blocks({"start": 0.0, "end": 30.0, "text": text})
    assert all(len(line) <= captions.LINE_CHARS for b in blocks for line in b["text"].split("\n"))
    assert max(b["end"] - b["start"] for b in blocks) <= captions.MAX_SECONDS + 1e-9


@pytest.mark.parametrize("lang", LANGS)
def test_no_chapters_caption_breaks_inside_a_phrase(tiny_bundle, lang):
    """Every chapter's cues, cut from its lines as the film cuts them (narration_cues: chapter_lines
    timed sentence by sentence, join_cues), end between phrases and keep every caption limit."""
    words = Words.load(lang)
    wrong = []
    for ch in CHAPTERS:
        cues = narration_cues(ch, tiny_bundle, words)
        assert cues
        report = Report.of(cues)
        assert report.ok, "\n".join([report.line(f"ch{ch} {lang}")] + [str(p) for p in report.problems])
        wrong += [f"ch{ch}: {w}" for w in phrase_breaks(cues, lang)]
    assert not wrong, "\n".join(wrong)
