"""The film's words: gettext PO catalogs, one per chapter (chNN.po) plus film.po and kit.po, per language.

    words/catalogs/en/ch02.po     the source catalog: msgctxt is the message's id, msgid its English
    words/catalogs/<lang>/*.po    a translation: the same ids, msgstr in that language
    qps                           generated from English (words/pseudo.py), never stored

Ids: a narration line is `chNN-<beat>` (recorded clips are named by it), its wording for random
weights `chNN-<beat>.synthetic`, its audio description `chNN-<beat>.describe` (what the picture
shows that the line does not say; see DESCRIBED_CHAPTERS and description_problems); words on screen are `chNN:<name>`; film-wide words (furniture,
titles, number words, meter steps) are `film:<name>`, chapter titles `chapter-NN`; the course
kit's words (decks, handouts, descriptions, notebooks: never in a frame, so no scene key holds
them) are `kit:<name>`; a model's name is `film:model-<hub id>` (`film:model-gpt2` "GPT-2 small"), `film:model-other` for any other shape
(`model_message`, `Words.model_name`).

`Words.load(lang, script)` is one language with a lecturer's own words (`--script FILE.po`) on
top. Every message is checked against English before anything renders: the same {placeholders}
and the same <bookmark mark="..."/> markers (words/markup.py), and no id English lacks.
"""
from __future__ import annotations

import gettext
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import polib

from onepass.data.errors import OnepassError
from onepass.data import models
from onepass.words import markup

CATALOGS = Path(__file__).resolve().parent / "catalogs"
SOURCE = "en"
PSEUDO = "qps"
SYNTHETIC = ".synthetic"        # suffix of a line's wording for random weights
DESCRIBE = ".describe"          # suffix of a beat's audio description (never spoken as narration)
# A description's wording for a still, the beat's settled frame (the handout's picture, whose
# alternative text it is): `chNN-<beat>.describe.still` (an architecture's: `chNN-<beat>.<variant>
# .describe.still`), what the frame shows with the description's numbers and no motion ("appears",
# "fades"); where a description narrates no motion it has none and the description serves.
STILL = ".still"
# An architecture's own wording of a line or description: `chNN-<beat>.<variant>` (then .synthetic,
# .describe as for any line), picked when the bundle's model has that component (Shape.component_tags:
# rope = rotary positions, rmsnorm, swiglu, gqa = fewer key/value heads than query heads, qknorm,
# untied); the first the catalog has, in the order the model lists them. The beat stays one beat.
VARIANTS = ("qknorm", "gqa", "rope", "rmsnorm", "swiglu", "untied")

# The chapters whose every narrated beat must have a description (`chNN-<beat>.describe`) in the
# English catalog, checked before anything renders (Words.load refuses a catalog that lacks one,
# as a scene refuses a beat with no narration line). None: every chapter.
# For whoever writes a chapter's descriptions: add them to words/catalogs/{en,es,ur}/chNN.po (one
# per `chNN-<beat>` line, `title` only where the catalog has chNN-title), then add "NN" here; once
# every chapter has them, set this to None. tests/test_describe.py checks them in every language.
DESCRIBED_CHAPTERS: tuple[str, ...] | None = None


# languages written right to left (their first subtag): Arabic, Persian, Hebrew, Pashto, Sindhi,
# Uyghur, Urdu, Yiddish
RTL_LANGUAGES = ("ar", "fa", "he", "ps", "sd", "ug", "ur", "yi")


def is_rtl(lang: str) -> bool:
    """Whether a language code (ur, ur-PK, ur_PK) is written right to left."""
    return lang.replace("_", "-").split("-")[0].lower() in RTL_LANGUAGES


class CatalogError(OnepassError, ValueError):
    """A catalog or script that cannot be used; the message names the language, ids and names."""

    def __init__(self, problems: list[str], where: str = ""):
        self.problems = problems
        head = f"{len(problems)} problem(s) in {where}" if where else f"{len(problems)} catalog problem(s)"
        super().__init__(head + ":\n" + "\n".join(f"  {p}" for p in problems))


@dataclass(frozen=True)
class Message:
    id: str
    forms: tuple[str, ...]      # one template; or the plural forms, in the language's order
    english: str = ""           # the msgid the message was written against (translations)
    note: str = ""              # the comment for translators


def plural_rule(header: str | None):
    """n -> index of the plural form, from a PO header's Plural-Forms (English's n != 1 without)."""
    expr = "(n != 1)"
    if header and "plural=" in header:
        expr = header.split("plural=", 1)[1].strip().rstrip(";")
    return gettext.c2py(expr)


_PO_STRING = r'"(?:[^"\\]|\\.)*"'
_PO_LINE = re.compile(rf'\s*(?:#.*|(?:#~\s*)?(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+)?{_PO_STRING}\s*|)$')


def syntax_problems(path: Path) -> list[str]:
    """Lines of a PO file that are not a comment, a keyword with one quoted string, or a quoted
    continuation (an unterminated `msgid "x`): each named by its line, since polib takes them as empty."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        return [f"{path}: not a readable PO file ({exc})"]
    return [f"{path.name}:{n}: not a PO line (an unterminated string, or a stray word?): {line.strip()[:60]!r}"
            for n, line in enumerate(text.split("\n"), 1) if not _PO_LINE.match(line.rstrip("\r"))][:20]


def read_po(path: Path, source: bool) -> tuple[dict[str, Message], str]:
    """(id -> Message, the Plural-Forms header) of one PO file; `source`: msgid is the text."""
    broken = syntax_problems(path)
    if broken:                # polib reads an unterminated string as an empty one, silently
        raise CatalogError(broken)
    try:
        po = polib.pofile(str(path), encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise CatalogError([f"{path}: not a readable PO file ({exc})"]) from None
    out: dict[str, Message] = {}
    problems = []
    for e in po:
        if e.obsolete:
            continue
        if not e.msgctxt:
            problems.append(f"{path.name}:{e.linenum}: message {e.msgid[:40]!r} has no msgctxt (its id)")
            continue
        if e.msgid_plural:
            forms = ((e.msgid, e.msgid_plural) if source and not any(e.msgstr_plural.values())
                     else tuple(e.msgstr_plural[k] for k in sorted(e.msgstr_plural)))
        else:
            forms = (e.msgid,) if source and not e.msgstr else (e.msgstr,)
        if not all(forms) or "fuzzy" in e.flags:
            continue                    # untranslated (or marked fuzzy): English is used
        if e.msgctxt in out:
            problems.append(f"{path.name}:{e.linenum}: {e.msgctxt} is defined twice")
        out[e.msgctxt] = Message(e.msgctxt, forms, e.msgid, e.comment or "")
    if problems:
        raise CatalogError(problems, str(path))
    return out, po.metadata.get("Plural-Forms", "")


@lru_cache(maxsize=16)
def _catalog(lang: str) -> tuple[dict[str, Message], str]:
    folder = CATALOGS / lang
    messages: dict[str, Message] = {}
    plural = ""
    for path in sorted(folder.glob("*.po")):
        found, plural = read_po(path, source=(lang == SOURCE))
        messages.update(found)
    return messages, plural


def english() -> dict[str, Message]:
    return _catalog(SOURCE)[0]


def languages() -> list[str]:
    """The languages there are: the stored catalogs and the generated pseudo-language."""
    stored = sorted(p.name for p in CATALOGS.iterdir() if p.is_dir() and any(p.glob("*.po")))
    return stored + [PSEUDO]


def _compare(where: str, msg: Message, base: Message | None) -> list[str]:
    """What is wrong with `msg` against the English message `base` (its names must match)."""
    if base is None:
        return [f"{where}: {msg.id}: no such message in English (a typo, or an id from another version?)"]
    problems = []
    try:
        want_p = markup.placeholders(base.forms[0]) | markup.placeholders(base.forms[-1])
        want_m = markup.marks(base.forms[0])
        for form in msg.forms:
            have_p, have_m = markup.placeholders(form), markup.marks(form)
            for kind, have, want in (("placeholder", have_p, want_p), ("marker", set(have_m), set(want_m))):
                if lack := sorted(want - have):
                    # a plural form may leave out the number it is chosen by ("one word")
                    if not (kind == "placeholder" and len(msg.forms) > 1):
                        problems.append(f"{where}: {msg.id}: lacks {kind}(s) {', '.join(lack)}")
                if extra := sorted(have - want):
                    problems.append(f"{where}: {msg.id}: unknown {kind}(s) {', '.join(extra)} "
                                    f"(English has: {', '.join(sorted(want)) or 'none'})")
            if len(have_m) != len(set(have_m)):
                problems.append(f"{where}: {msg.id}: a marker appears twice")
    except markup.MarkupError as exc:
        problems.append(f"{where}: {msg.id}: {exc}")
    return list(dict.fromkeys(problems))


def check(messages: dict[str, Message], where: str) -> list[str]:
    """Every message of a translation or script compared with English (see _compare)."""
    base = english()
    return [p for mid, msg in sorted(messages.items()) for p in _compare(where, msg, base.get(mid))]


_checked: dict[str, tuple[tuple, list[str]]] = {}     # where -> (the catalogs checked, their problems)


def _checked_once(where: str, catalogs: tuple, problems_of) -> list[str]:
    """problems_of(*catalogs), computed once for these catalogs (the same objects, each read once per
    process by _catalog): every Words.load checks English and its language, and a manifest of 1,000
    jobs spent 90% of its 22 s of validation checking the same catalogs 1,000 times."""
    kept = _checked.get(where)
    if kept is None or len(kept[0]) != len(catalogs) or any(a is not b for a, b in zip(kept[0], catalogs)):
        kept = _checked[where] = (catalogs, problems_of(*catalogs))
    return list(kept[1])


def check_source() -> list[str]:
    """English's own templates must parse: bare placeholders, well-named markers; and its
    descriptions must fit their beats (description_problems)."""
    def problems_of(messages):
        problems = []
        for mid, msg in sorted(messages.items()):
            for form in msg.forms:
                try:
                    markup.placeholders(form)
                    markup.marks(form)
                except markup.MarkupError as exc:
                    problems.append(f"en: {mid}: {exc}")
        return problems or description_problems(messages)
    return _checked_once(SOURCE, (english(),), problems_of)


def is_description(mid: str) -> bool:
    return mid.startswith("ch") and mid.endswith(DESCRIBE)


def is_still(mid: str) -> bool:
    """A description's wording for a still (`chNN-<beat>.describe.still`)."""
    return mid.startswith("ch") and mid.endswith(DESCRIBE + STILL)


def variant_of(mid: str) -> str | None:
    """The architecture variant a message id words (`ch02-scale.rope` -> 'rope'), or None."""
    parts = mid.split(".")[1:]
    return next((p for p in parts if p in VARIANTS), None)


def is_narration(mid: str) -> bool:
    """A narration line's id (`chNN-<beat>`), not its synthetic wording, an architecture's wording nor
    its description."""
    return (mid.startswith("ch") and not mid.startswith("chapter-") and mid[4:5] == "-"
            and not mid.endswith((SYNTHETIC, DESCRIBE, DESCRIBE + STILL)) and variant_of(mid) is None)


def described(chapter: str) -> bool:
    """Whether every narrated beat of `chapter` must have a description (DESCRIBED_CHAPTERS)."""
    return DESCRIBED_CHAPTERS is None or chapter in DESCRIBED_CHAPTERS


def _in_order(names: list[str], within: list[str]) -> bool:
    it = iter(within)
    return all(n in it for n in names)


def description_problems(messages: dict[str, Message]) -> list[str]:
    """What is wrong with the English catalog's descriptions: one that describes no narration line;
    a marker that is not among its beat's narration markers (in the line and in its wording for
    random weights, when it has one) in the same order; and, for each chapter that `described`,
    a narrated beat with no description."""
    problems = []
    for mid in sorted(m for m in messages if is_description(m)):
        line = mid[: -len(DESCRIBE)]
        if line not in messages or not (is_narration(line) or (variant_of(line) and line.endswith(
                "." + variant_of(line)) and line.rsplit(".", 1)[0] in messages)):
            problems.append(f"en: {mid}: describes no narration line ({line} does not exist)")
            continue
        have = markup.marks(messages[mid].forms[0])
        for wording in (line, line + SYNTHETIC):
            if wording in messages:
                want = markup.marks(messages[wording].forms[0])
                if not _in_order(have, want):
                    problems.append(f"en: {mid}: its markers {', '.join(have)} must be among {wording}'s "
                                    f"({', '.join(want) or 'none'}), in the same order")
    for mid in sorted(m for m in messages if is_still(m)):
        if mid[: -len(STILL)] not in messages:
            problems.append(f"en: {mid}: a still's wording of no description ({mid[: -len(STILL)]} does not exist)")
        elif markup.marks(messages[mid].forms[0]):
            problems.append(f"en: {mid}: a still's wording is never timed: it cannot hold markers")
    for mid in sorted(m for m in messages if is_narration(m)):
        if described(mid[2:4]) and mid + DESCRIBE not in messages:
            problems.append(f"en: {mid}: has no description (add {mid}{DESCRIBE} to "
                            f"words/catalogs/{SOURCE}/{catalog_file(mid)}: what the picture shows that the line "
                            "does not say)")
    return problems


# What a lecturer's message may hold (issue 41): a message is drawn, spoken and captioned, so a 10 MB
# one stalled the render; the longest stored one is under 1,000 characters.
MAX_MESSAGE_CHARS = 4000          # about 600 words: four minutes of speech in one line
MAX_SCRIPT_BYTES = 4 << 20        # every message of every chapter, in any language, is a few hundred KB


def control_characters(text: str) -> list[str]:
    """The characters of `text` no screen or caption can show, each once, in order: C0 controls
    (but tab and newline), DEL, the C1 controls and lone surrogates (as a typed prompt's)."""
    return sorted({c for c in text if (ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F
                   or 0xD800 <= ord(c) <= 0xDFFF})


def script_problems(messages: dict[str, Message], where: str) -> list[str]:
    """What a lecturer's messages hold that the film cannot show or say: control characters
    (refused as in a prompt: they reached captions as raw bytes and cut burned captions short) and
    a message longer than MAX_MESSAGE_CHARS."""
    problems = []
    for mid, msg in sorted(messages.items()):
        for form in msg.forms:
            bad = control_characters(form)
            if bad:
                problems.append(f"{where}: {mid}: holds control characters "
                                f"({', '.join(f'U+{ord(c):04X}' for c in bad)}); remove them")
            if len(form) > MAX_MESSAGE_CHARS:
                problems.append(f"{where}: {mid}: is {len(form):,} characters long; a message holds at most "
                                f"{MAX_MESSAGE_CHARS:,} (split a long line across beats)")
    return list(dict.fromkeys(problems))


def read_script(path: str | Path) -> dict[str, Message]:
    """A lecturer's own words (`--script FILE.po`): the messages it gives words for."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise CatalogError([f"{path}: no such file (a PO file whose msgctxt are message ids; "
                            f"start from a copy of {CATALOGS / SOURCE / 'ch02.po'})"])
    size = path.stat().st_size
    if size > MAX_SCRIPT_BYTES:
        raise CatalogError([f"{path}: is {size:,} bytes; a script holds at most {MAX_SCRIPT_BYTES:,} "
                            "(every message of the film is a few hundred KB)"])
    messages, _ = read_po(path, source=False)
    return messages


def catalog_file(mid: str) -> str:
    """The file a message belongs in: chNN.po for `chNN-…`/`chNN:…`, kit.po for `kit:…`, else film.po."""
    if mid.startswith("ch") and not mid.startswith("chapter-"):
        return f"{mid[:4]}.po"
    return "kit.po" if mid.startswith("kit:") else "film.po"


def model_message(model: str | None) -> str:
    """The id of a model's name: `film:model-<name>` for a model onepass knows (the GPT-2 family and
    the Llama-style models of onepass.data.models; `Bundle.model`), `film:model-other` for None or any other shape."""
    return f"film:model-{model}" if model in models.MODELS else "film:model-other"


def _value(v) -> str:
    """A value as the template receives it: text as it is, whole numbers as digits."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        raise TypeError("a yes/no value has no words of its own: choose a message instead")
    if isinstance(v, int) or type(v).__name__.startswith(("int", "uint")):
        return str(int(v))
    raise TypeError(f"{type(v).__name__} value {v!r}: format it through words/numbers.py first")


@dataclass
class Words:
    """One language's words (English beneath, for what it lacks), a lecturer's script on top."""
    lang: str
    messages: dict[str, Message]
    plural: object = None                                  # n -> form index
    script: Path | None = None
    given: set[str] = field(default_factory=set)           # ids the script gives words for
    overridden: set[str] = field(default_factory=set)      # ids the script changed
    fallbacks: set[str] = field(default_factory=set)       # ids shown in English for want of a translation

    @classmethod
    def load(cls, lang: str = SOURCE, script: str | Path | None = None) -> "Words":
        problems = check_source()
        if problems:
            raise CatalogError(problems, "the English catalog")
        base = english()
        if lang == SOURCE:
            messages, rule = dict(base), _catalog(SOURCE)[1]
        elif lang == PSEUDO:
            from onepass.words.pseudo import pseudo_message   # generated on demand
            messages, rule = {k: pseudo_message(m) for k, m in base.items()}, _catalog(SOURCE)[1]
        elif (CATALOGS / lang).is_dir():
            own, rule = _catalog(lang)
            problems = _checked_once(lang, (own, base), lambda mine, _: check(mine, lang))
            if problems:
                raise CatalogError(problems, f"the {lang} catalog")
            messages = {**base, **own}
        else:
            raise CatalogError([f"no catalog for language {lang!r}; there are: {', '.join(languages())}"])
        words = cls(lang, messages, plural_rule(rule))
        words.fallbacks = set(base) - set(messages if lang in (SOURCE, PSEUDO) else _catalog(lang)[0])
        if script is not None:
            own = read_script(script)
            problems = script_problems(own, str(script)) + check(own, str(script))
            if problems:
                raise CatalogError(problems, str(script))
            words.script = Path(script).expanduser().resolve()
            words.given = set(own)
            words.overridden = {k for k, m in own.items() if m.forms != messages.get(k, m).forms}
            words.messages.update(own)
        return words

    # -- looking up ----------------------------------------------------------------
    def has(self, mid: str) -> bool:
        return mid in self.messages

    def template(self, mid: str, count: int | None = None) -> str:
        msg = self.messages.get(mid)
        if msg is None:
            raise CatalogError([f"{self.lang}: no message {mid} (add it to words/catalogs/{SOURCE}/{catalog_file(mid)})"])
        if len(msg.forms) == 1:
            return msg.forms[0]
        if count is None:
            raise CatalogError([f"{self.lang}: {mid} has plural forms: give count="])
        return msg.forms[min(int(self.plural(int(count))), len(msg.forms) - 1)]

    def _values(self, mid: str, template: str, values: dict) -> dict:
        missing = markup.placeholders(template) - values.keys()
        if missing:
            raise CatalogError([f"{self.lang}: {mid} names {', '.join(sorted(missing))}, which the "
                                f"caller does not provide (it gives: {', '.join(sorted(values)) or 'nothing'})"])
        return {k: _value(v) for k, v in values.items()}

    def wording(self, mid: str, synthetic: bool = False, variants: tuple[str, ...] = ()) -> str:
        """The id whose wording a line takes: its architecture's own (`mid.<variant>`, the first of
        `variants` the catalog has), then its wording for random weights where there is one. A
        description (`....describe`) takes its architecture's wording (`mid.<variant>.describe`) too,
        and a still's (`....describe.still`) its architecture's description's still wording, where
        written, else that description itself (a description that narrates no motion has none)."""
        if mid.endswith(DESCRIBE + STILL):
            described = self.wording(mid[: -len(STILL)], variants=variants)
            return described + STILL if self.has(described + STILL) else described
        base, tail = (mid[: -len(DESCRIBE)], DESCRIBE) if mid.endswith(DESCRIBE) else (mid, "")
        for v in variants:
            if self.has(f"{base}.{v}{tail}"):
                base = f"{base}.{v}"
                break
        mid = base + tail
        if synthetic and not tail and self.has(mid + SYNTHETIC):
            mid = mid + SYNTHETIC
        return mid

    def line(self, mid: str, values: dict, synthetic: bool = False,
             variants: tuple[str, ...] = ()) -> markup.Filled:
        """A narration line with its values in: its architecture's wording (`variants`, the bundle's
        Shape.component_tags()) and its wording for random weights, where the catalog has them."""
        mid = self.wording(mid, synthetic, variants)
        template = self.template(mid)
        from onepass.words.grammar import written_grammar
        return markup.fill(template, self._values(mid, template, values), tidy=written_grammar(self.lang))

    def text(self, mid: str, count: int | None = None, **values) -> str:
        """Words for the screen (or any one-piece text): the message with its values in, its line
        breaks kept; `count` chooses the plural form (and fills {n} unless given)."""
        if count is not None:
            values.setdefault("n", count)
        template = self.template(mid, count)
        if markup.marks(template):
            raise CatalogError([f"{self.lang}: {mid} is shown, not spoken: it cannot hold markers"])
        return template.format(**self._values(mid, template, values))

    def model_name(self, model: str | None) -> str:
        """A model's name in this language ("GPT-2 small", "GPT-2 XL", "a GPT-2-shaped model"):
        the `{model}` of the film's title and the title card; `model` is `Bundle.model`."""
        return self.text(model_message(model))
