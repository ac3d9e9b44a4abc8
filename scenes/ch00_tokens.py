"""Chapter 00 — from text to token ids. The Σ meter reads 0 throughout: tokenizing is lookups.

Everything shown comes from the bundle (prompt, ids, token texts) or from the model's own
tokenizer files (vocabulary, merge ranks: GPT-2's, or the model's own merges for a modern decoder),
via onepass.data.facts.ch00.token_facts. A model that is not GPT-2 also shows GPT-2's tokens of the
same prompt (the ratio beat) and what its vocabulary costs as a table, rows x width (the handoff).
"""
from __future__ import annotations

import textwrap

from manim import (DOWN, LEFT, RIGHT, UP, AddTextLetterByLetter, Arrow, FadeIn, FadeOut, GrowArrow, GrowFromEdge, LaggedStart, Create,
                   Line, Rectangle, RoundedRectangle, Succession, SurroundingRectangle, Transform, VGroup)

from onepass.data import tokenizer
from onepass.data.bundle import shown_text
from onepass.data.facts.ch00 import token_facts
from onepass.engine.text import glyphs_of, string_of
from onepass.scenes import style as S
from onepass.scenes.base import ChapterScene
from onepass.scenes.follow import Swell, glow, say
from onepass.scenes.layout import GAP, above, below, fit_to, flow, keep_inside, place_in, table
from onepass.scenes.text import fit_lines, fit_width, label, ltr_safe
from onepass.scenes.pieces_ch00 import VocabStrip, byte_grid, callouts, squares_pair
from onepass.scenes.widgets import TokenChip, token_row
from onepass.words import numbers as N


visible_bytes = S.visible_bytes   # whole characters as themselves, stray bytes as <D8> (one helper, every chapter)


# ascender to descender of unaccented Latin ("hp") per point of font size, in DejaVu Sans and Sans Mono
# alike, measured offline (building a Text here would add one to every scene)
LATIN_LINE_PER_PT = 0.01345


def accent_room(*texts) -> float:
    """How much taller than a line of unaccented Latin these labels are (another language's accents,
    brackets): a fit by height grants it, so that what is fitted with such titles keeps English's scale."""
    return max([0.0] + [t.height - LATIN_LINE_PER_PT * t.font_size for t in texts])


def chip_text(text: str, token_id: int, tok=tokenizer) -> str:
    """The bundle's token text, unless it is part of a character (U+FFFD): then its bytes."""
    return visible_bytes(tok.token_bytes(token_id)) if "\ufffd" in text else text


def pieces_row(word: str, ids: list[int], tok=tokenizer) -> VGroup:
    """A word's chip, an arrow, and the pieces `tok` cuts it into, each with its id (left to right
    always: the model's own string)."""
    pieces = VGroup(*[TokenChip(chip_text(tok.readable(i), i, tok), i, size=S.BODY_SIZE) for i in ids])
    pieces.arrange(RIGHT, buff=GAP.s, aligned_edge=UP)
    arrow = Arrow(LEFT, RIGHT, buff=GAP.none, color=S.MUTED, stroke_width=3)
    return VGroup(TokenChip(word, size=S.BODY_SIZE), arrow, pieces).arrange(RIGHT, buff=GAP.s)


def wrapped_lines(text: str, width: int) -> list[str]:
    """The prompt in lines of at most `width` characters (newlines, tabs and bidi controls made visible:
    a right-to-left override would reorder the rest of the line)."""
    flat = shown_text(text).replace("\n", "↵ ").replace("\t", "⇥ ")
    return textwrap.wrap(flat, width, break_long_words=True, drop_whitespace=True) or [flat]


def text_block(text: str, size: int, width_chars: int, max_w: float, color=S.INK, mono=False) -> VGroup:
    lines = VGroup(*[label(line, size, color, mono=mono) for line in wrapped_lines(text, width_chars)])
    lines.arrange(DOWN, buff=GAP.s, aligned_edge=LEFT)
    return fit_width(lines, max_w)


CHIP_LINES_GAP = 0.3      # between the lines of a prompt's chips (each line's ids under its chips)


def chip_flow(texts, ids=None, max_width: float = S.CONTENT_W, size: int = S.BODY_SIZE) -> VGroup:
    """Token chips (with ids beneath when given) flowing over as many lines as they need."""
    chips = [TokenChip(t, None if ids is None else i, size=size)
             for t, i in zip(texts, ids if ids is not None else [None] * len(texts))]
    flow(chips, max_width, GAP.s, CHIP_LINES_GAP)
    return VGroup(*chips)


def first_char(chip: TokenChip, text: str) -> Rectangle:
    """An invisible box over the first character of a chip's text (its '·' when it has a leading space)."""
    n = max(1, len(S.show_token(text)))
    w = chip.text_mob.width / n
    box = Rectangle(width=w, height=chip.text_mob.height, stroke_width=0, fill_opacity=0)
    return box.move_to(chip.text_mob, aligned_edge=LEFT)


def id_list_block(ids: list[int], max_w: float) -> VGroup:
    """'[464, 3797, …]' wrapped over lines of equal length, monospace."""
    parts = [str(i) for i in ids]
    per_line = len(parts)
    while per_line > 1:
        width = len(", ".join(parts[:per_line])) + 2
        if width * 0.2 <= max_w:   # ~0.2 units per mono character at SMALL+ sizes
            break
        per_line -= 1
    lines = [", ".join(parts[i:i + per_line]) for i in range(0, len(parts), per_line)]
    lines = [("[" if k == 0 else " ") + line + ("]" if k == len(lines) - 1 else ",") for k, line in enumerate(lines)]
    block = VGroup(*[label(line, S.NUMBER_SIZE, S.TOKEN, mono=True) for line in lines])
    block.arrange(DOWN, buff=GAP.xs, aligned_edge=LEFT)
    return fit_width(block, max_w)


class TokensScene(ChapterScene):
    chapter = "00"

    def setup(self):
        super().setup()
        self.facts = token_facts(self.bundle)
        self.tok = self.bundle.tokenizer      # the model's own (GPT-2's module for the GPT-2 family)
        self.chip_texts = [chip_text(t, i, self.tok) for t, i in zip(self.facts["tokens"], self.facts["ids"])]
        # GPT-2's own strings drawn besides the prompt's tokens (the tokenizer's, never the catalog's):
        # the three spellings, the replayed word's pieces, the end-of-text marker, the greeting and its tokens
        f, lad = self.facts, self.facts["ladder"]
        pieces = {*f["case_words"], lad["word"], *(symbol_text(s) for step in lad["steps"] for s in step),
                  tokenizer.EOT, f["other_text"], *(visible_bytes(self.tok.token_bytes(i)) for i in f["other_ids"])}
        if f["compare"]:          # GPT-2's pieces of the prompt, the model's special tokens' names
            pieces |= {*f["compare"]["gpt2_tokens"], f["compare"]["model_title"],
                       *(self.tok.tok.id_to_token(i) for i in self.tok.special_ids()[:1])}
            if f["compare"]["bos"]:
                pieces.add(f["compare"]["bos"])
        self.gpt2_texts = {form for p in pieces for form in (p, S.show_token(p), ltr_safe(p), ltr_safe(S.show_token(p)))}

    def picture_out(self) -> list:
        """FadeOuts of everything on screen but the furniture (meter, heading, random-weights mark)."""
        keep = {id(m) for part in (self.meter, self.heading, getattr(self, "random_mark", None)) if part is not None
                for m in part.get_family()}
        return [FadeOut(m) for m in self.mobjects if id(m) not in keep]


class Prompt(TokensScene):
    """The prompt typed out, cut into tokens, each token swapped for its id."""
    show_title = True

    def build(self):
        f = self.facts
        with self.beat("intro") as beat:
            big = text_block(f["prompt"], S.TITLE_SIZE, 40, S.CONTENT_W)
            fit_to(big, width=S.CONTENT_W, height=2.2, grow=1.6)
            self.gpt2_texts.update(string_of(line) for line in big)     # the prompt, in lines
            count = label(self.text("counts",
                                    words=self.text("word-count", count=f["words"], n=N.fmt_int(f["words"])),
                                    characters=self.text("character-count", count=f["chars"],
                                                         n=N.fmt_int(f["chars"]))), S.BODY_SIZE, S.MUTED)
            below(count, big, buff=GAP.l)
            # "a tokenizer cuts it into pieces": the prompt goes into the tokenizer
            box = RoundedRectangle(corner_radius=0.12, width=S.LEFT_HALF.width, height=0.9,
                                   stroke_color=S.TOKEN, stroke_width=3,
                                   fill_color=S.PANEL, fill_opacity=1)
            box_name = label(self.text("tokenizer-box"), S.BODY_SIZE, S.TOKEN).move_to(box)
            fit_width(box_name, box.width - 0.3)
            tokenizer_box = below(VGroup(box, box_name), count, buff=GAP.xl)      # room for the arrow
            place_in(VGroup(big, count, tokenizer_box), S.CONTENT)
            into = Arrow(count.get_bottom(), tokenizer_box.get_top(), buff=GAP.xs, color=S.TOKEN, stroke_width=4)
            typing = beat.span(0.9)
            per_char = typing / max(1, f["chars"])
            # typed letter by letter; a line Pango draws no glyph for (only format characters) fades in
            self.play(Succession(*[AddTextLetterByLetter(line, time_per_char=per_char,
                                                         run_time=max(0.2, per_char * len(string_of(line))))
                                   if glyphs_of(line) else FadeIn(line) for line in big]), run_time=typing)
            lit_prompt = glow(big, color=S.INK, buff=GAP.s, opacity=0.08)
            say(self, beat, "count", FadeIn(count, shift=UP * GAP.xs), FadeIn(lit_prompt))
            say(self, beat, "count", GrowArrow(into), FadeIn(tokenizer_box, shift=UP * GAP.s), into=0.55)

        # the layout of the next two beats: chips (the prompt, cut) / the id list
        chips = chip_flow(self.chip_texts, f["ids"])
        ids = id_list_block(f["ids"], S.CONTENT_W)
        caption = label(self.text("model-input"), S.SMALL, S.MUTED)
        id_group = VGroup(caption, ids).arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)
        layout = VGroup(chips, id_group).arrange(DOWN, buff=GAP.xl)
        room = S.CONTENT.with_(bottom=S.CONTENT.bottom + 0.5)   # half a unit more air above the captions
        place_in(fit_to(layout, width=room.width, height=room.height + accent_room(caption), grow=1.3), room)
        id_mobs = VGroup(*[c.id_mob for c in chips])
        for m in id_mobs:
            m.set_opacity(0)
        with self.beat("split") as beat:
            note = label(self.text("leading-space-note"), S.BODY_SIZE, S.MUTED)
            below(fit_width(note, S.CONTENT_W), chips, buff=GAP.l)
            spaced = [(c, t) for c, t in zip(chips, self.chip_texts) if t.startswith(" ")]
            dots = VGroup(*[glow(first_char(c, t), buff=GAP.xxs, opacity=0.35) for c, t in spaced])
            words = VGroup(*[glow(c, buff=GAP.xxs) for c, _ in spaced])
            self.play(FadeOut(big, shift=UP * GAP.m), FadeOut(lit_prompt), FadeOut(count), FadeOut(into), FadeOut(tokenizer_box),
                      LaggedStart(*[FadeIn(VGroup(c.box, c.text_mob), shift=DOWN * GAP.s) for c in chips],
                                  lag_ratio=min(0.3, 3.0 / max(1, len(chips)))), run_time=beat.span(0.8))
            if spaced:   # "the dot marks a leading space": the dots, then the words they belong to
                say(self, beat, "dot", FadeIn(dots), FadeIn(note))
                say(self, beat, "dot", FadeOut(dots), FadeIn(words), into=0.5)
            else:
                say(self, beat, "dot", FadeIn(note))
        with self.beat("ids") as beat:
            # "each piece is swapped for its number": a highlight walks the chips as their ids are read
            pieces = [VGroup(c.box, c.text_mob, c.id_mob) for c in chips]
            hl = glow(pieces[0])
            lead = 0.3         # the sentence names the vocabulary before it reads the ids
            say(self, beat, "swap", FadeOut(note), FadeOut(words), FadeIn(hl), id_mobs[0].animate.set_opacity(1))
            for k in range(1, len(chips)):
                frac = lead + (1 - lead) * k / len(chips)
                say(self, beat, "swap", Transform(hl, glow(pieces[k])), id_mobs[k].animate.set_opacity(1),
                    into=frac, run_time=min(0.6, beat.span(0.3)))
            list_glow = glow(id_group, buff=GAP.s)
            say(self, beat, "list", FadeOut(hl), FadeIn(caption),
                LaggedStart(*[FadeIn(line, shift=UP * GAP.xs) for line in ids], lag_ratio=0.3), FadeIn(list_glow))
            # "the meter reads zero: cutting and looking up is not arithmetic"
            # the title and the count only: the step line this pay brings sits under them, and a ring
            # sized to the meter before it (an empty step) would cut through its words
            ring = glow(VGroup(self.meter.title, self.meter.counter), color=S.FLOPS, buff=GAP.xxs, opacity=0.15)
            zero = label(self.text("zero-flops"), S.BODY_SIZE, S.FLOPS)
            keep_inside(below(fit_width(zero, S.CONTENT_W), id_group, buff=GAP.l), S.CONTENT)
            beat.at("meter")
            run = beat.span(0.3)
            self.pay("tokens", FadeOut(list_glow), FadeIn(ring), run_time=run)
            say(self, beat, "meter", FadeIn(zero, shift=UP * GAP.xs), FadeOut(ring), into=0.45)


class SameWord(TokensScene):
    """'The', ' the' and 'the': one word, three ids in the real vocabulary."""

    def build(self):
        f = self.facts
        notes = (self.text("case-capital"), self.text("case-leading-space"), self.text("case-no-space"))
        with self.beat("case") as beat:
            cols = VGroup()
            for word, tid, note in zip(f["case_words"], f["case_ids"], notes):
                chip = TokenChip(word, size=S.TITLE_SIZE)
                top = label(note, S.SMALL, S.MUTED).next_to(chip, UP, buff=GAP.m)
                num = below(label(str(tid), S.TITLE_SIZE, S.TOKEN, mono=True), chip, buff=GAP.l)
                col = VGroup(top, chip, num)
                if tid in f["ids"]:
                    col.add(below(label(self.text("in-prompt"), S.SMALL, S.INK), num, buff=GAP.s))
                cols.add(col)
            cols.arrange(S.END, buff=1.4, aligned_edge=UP)     # the three spellings in reading order
            footer = label(self.text("case-footer"), S.BODY_SIZE, S.INK)
            fit_width(footer, S.CONTENT_W).move_to(UP * S.FOOTER_Y)
            above = S.CONTENT.with_(bottom=footer.get_top()[1])
            place_in(fit_to(cols, width=S.CONTENT_W, height=3.4), above)
            self.play(LaggedStart(*[FadeIn(VGroup(c[0], c[1]), shift=UP * GAP.s) for c in cols], lag_ratio=0.3),
                      run_time=beat.span(0.8))
            # each spelling's id lights up as it is read
            hl = None
            for k, c in enumerate(cols):
                box = glow(c, buff=GAP.s)
                step = [FadeIn(VGroup(*c[2:]), shift=DOWN * GAP.s), Transform(hl, box) if hl else FadeIn(box)]
                say(self, beat, "capital", *step, into=k / len(cols))
                hl = hl or box
            # "the letters inside them are invisible to the model"
            say(self, beat, "invisible", FadeOut(hl), FadeIn(footer, shift=UP * GAP.xs))
            # "three different strings, so three different tokens": the three ids, each its own
            say(self, beat, "invisible", *[Swell(c[2]) for c in cols], into=0.22)
            # "the model never sees the letters inside them"
            say(self, beat, "invisible", *[c[1].text_mob.animate.set_opacity(0.25) for c in cols], into=0.45)
            # "that is why a model can miscount the r's": the word as the model receives it
            letters = self.letters_picture(f, above)
            say(self, beat, "letters", FadeOut(cols), FadeIn(letters, shift=UP * GAP.s))

    def letters_picture(self, f, room: S.Region) -> VGroup:
        """The counted word mid-sentence and on its own, each as its letters, then the pieces and ids
        this tokenizer turns it into: the letters (and so the r's) are in no id."""
        rows = VGroup()
        for spelling, ids in f["letters"]:
            rows.add(pieces_row(spelling, ids, self.tok))
            self.gpt2_texts.update({spelling, S.show_token(spelling)})
            self.gpt2_texts.update(chip_text(self.tok.readable(i), i, self.tok) for i in ids)
        rows.arrange(DOWN, buff=GAP.l, aligned_edge=LEFT)
        note = fit_lines(self.text("letters-note", n=N.fmt_int(f["letter_count"]), letter=f["letter"]),
                         S.BODY_SIZE, S.WARNING, S.CONTENT_W)
        below(note, rows, buff=GAP.l)
        picture = VGroup(rows, note)
        place_in(fit_to(picture, room), room)
        return picture


class WhyPieces(TokensScene):
    """Why pieces: whole words would need a list without end and miss new words; characters make the
    sequence long, and attention's comparisons grow with the square of its length; subword pieces sit
    between, and stand on bytes, so any text at all can be written."""

    def headline(self, name: str):
        return fit_width(label(self.text(name), S.BODY_SIZE, S.INK), S.CONTENT_W).move_to(UP * S.HEADLINE_Y)

    @staticmethod
    def in_halves(parts, room: S.Region):
        """Two parts of a picture, one in each half of `room`, the first where the reader starts."""
        halves = [S.LEFT_HALF, S.RIGHT_HALF][::-1 if S.RTL else 1]
        for part, half in zip(parts, halves):
            box = half.with_(top=room.top, bottom=room.bottom)
            place_in(fit_to(part, box.with_(left=box.left + GAP.m, right=box.right - GAP.m)), box)
        return parts

    def words_picture(self, f, room: S.Region) -> tuple:
        """A word list (the prompt's words, then more without end) and a word it lacks, answered by '?'."""
        words = list(dict.fromkeys(f["prompt"].split()))[:4]
        self.gpt2_texts.update(words)
        rows = VGroup(*[TokenChip(w, size=S.BODY_SIZE) for w in words])
        more = VGroup(*[TokenChip("…", size=S.BODY_SIZE, color=S.MUTED) for _ in range(3)])
        # the words and the list's unending rest, as a paragraph no wider than half the frame
        flow([*rows, *more], S.LEFT_HALF.width - 2 * GAP.xl, GAP.s, GAP.s)
        panel = SurroundingRectangle(VGroup(rows, more), buff=GAP.m, corner_radius=0.1, color=S.MUTED,
                                     stroke_width=2, fill_color=S.PANEL, fill_opacity=0.6)
        name = label(self.text("word-list"), S.SMALL, S.INK)
        above(name, panel, buff=GAP.s)
        endless = fit_lines(self.text("word-list-endless"), S.SMALL, S.MUTED, S.LEFT_HALF.width - 2 * GAP.xl)
        below(endless, panel, buff=GAP.s)
        left = VGroup(name, panel, rows, more, endless)
        typo = TokenChip(f["typo"], size=S.TITLE_SIZE)
        unknown = label("?", S.TITLE_SIZE, S.WARNING)
        box = SurroundingRectangle(unknown, buff=GAP.m, corner_radius=0.1, color=S.WARNING, stroke_width=3,
                                   fill_color=S.PANEL, fill_opacity=1)
        no_number = fit_lines(self.text("no-number"), S.SMALL, S.WARNING, S.RIGHT_HALF.width - 2 * GAP.xl)
        answer = VGroup(VGroup(box, unknown), no_number).arrange(DOWN, buff=GAP.s)
        right = VGroup(typo, answer).arrange(DOWN, buff=GAP.xl)
        picture = VGroup(left, right)
        self.in_halves(picture, room)
        asks = Arrow(typo.get_bottom(), answer.get_top(), buff=GAP.xs, color=S.WARNING, stroke_width=4)
        return picture, (name, panel, rows), (more, endless), (typo, asks, answer)

    def squares_picture(self, f, room: S.Region) -> VGroup:
        """The prompt as tokens and as characters: each a strip of positions and, under it, the square of
        comparisons attention makes over it, at one scale."""
        T, chars = f["T"], f["chars"]
        names = [label(self.text("token-count", count=T, n=N.fmt_int(T)), S.SMALL, S.TOKEN),
                 label(self.text("character-count", count=chars, n=N.fmt_int(chars)), S.SMALL, S.INK)]
        sums = [label(self.text("comparisons", n=N.fmt_int(n), total=N.fmt_int(n * n)), S.SMALL, colour)
                for n, colour in ((T, S.TOKEN), (chars, S.INK))]
        words_h = max(m.height for m in names) + max(m.height for m in sums) + 2 * GAP.xs
        side = min((room.height - words_h) * chars / (chars + 1), room.width / 2)
        strips, squares, _ = squares_pair((T, chars), side, (S.TOKEN, S.MUTED))
        pairs = VGroup()
        for nm, st, sq, sm in zip(names, strips, squares, sums):
            above(nm, st, buff=GAP.xs, aligned=LEFT)
            below(sm, sq, buff=GAP.xs, aligned=LEFT)
            pairs.add(VGroup(nm, st, sq, sm))
        pairs.arrange(S.END, buff=GAP.xl, aligned_edge=UP)
        place_in(fit_to(pairs, room), room)
        return pairs

    def subwords_picture(self, f, room: S.Region) -> tuple:
        """A common word as one token, the made-up word as pieces, and the 256 bytes all of them stand on."""
        lad = f["ladder"]
        rows = VGroup()
        for word, ids in ((lad["word"], lad["ids"]), (f["typo"], f["typo_ids"])):
            rows.add(pieces_row(word, ids, self.tok))
        rows.arrange(DOWN, buff=GAP.l, aligned_edge=LEFT)
        lit = set(f["typo_bytes"]) | set(lad["word"].encode("utf-8"))
        grid = byte_grid(lit, 0.2)
        n_bytes = f["vocab"].byte_tokens
        note = (self.text("bytes-note", n=N.fmt_int(n_bytes)) if n_bytes >= 256 or not f["compare"] else
                self.text("bytes-note-most", n=N.fmt_int(n_bytes), total=N.fmt_int(256)))
        grid_note = fit_lines(note, S.SMALL, S.MUTED,
                              S.RIGHT_HALF.width - 2 * GAP.xl)
        below(grid_note, grid, buff=GAP.s)
        right = VGroup(grid, grid_note)
        # the grid at the end of the line, the words in all the width it leaves
        place_in(fit_to(right, room), room, S.END)
        rest = room.with_(right=right.get_left()[0] - GAP.xl) if not S.RTL else room.with_(left=right.get_right()[0] + GAP.xl)
        place_in(fit_to(rows, rest), rest)
        return rows, right

    def build(self):
        f = self.facts
        lad = f["ladder"]
        for i in [*f["typo_ids"], *lad["ids"]]:
            t = chip_text(self.tok.readable(i), i, self.tok)
            self.gpt2_texts.update({t, S.show_token(t)})
        self.gpt2_texts.update({f["typo"], S.show_token(f["typo"]), "…", "?"})
        rise = UP * GAP.s
        # whole words: a list that never ends, and a word it lacks
        with self.beat("words") as beat:
            title = self.headline("words-title")
            room = S.CONTENT.with_(top=title.get_bottom()[1] - GAP.m)
            picture, (name, panel, rows), (more, endless), (typo, asks, answer) = self.words_picture(f, room)
            self.play(FadeIn(title, shift=-rise), FadeIn(name), FadeIn(panel),
                      LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in rows], lag_ratio=0.3),
                      run_time=beat.span(0.8))
            say(self, beat, "endless", LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in more], lag_ratio=0.4))
            say(self, beat, "endless", FadeIn(endless, shift=rise), FadeIn(glow(more, color=S.MUTED, buff=GAP.xs)),
                into=0.45)
            say(self, beat, "unknown", FadeIn(typo, shift=DOWN * GAP.s), FadeIn(glow(typo, color=S.WARNING)))
            say(self, beat, "unknown", GrowArrow(asks), FadeIn(answer, shift=rise), into=0.5)
        # characters: a long sequence, and the square of comparisons attention makes over it
        with self.beat("letters") as beat:
            title = self.headline("letters-title")
            room = S.CONTENT.with_(top=title.get_bottom()[1] - GAP.s)
            pairs = self.squares_picture(f, room)
            self.squares = [sq for _, _, sq, _ in pairs]
            self.play(*self.picture_out(), FadeIn(title, shift=-rise), run_time=beat.span(0.6))
            say(self, beat, "long", *[FadeIn(VGroup(nm, st), shift=RIGHT * GAP.s) for nm, st, _, _ in pairs])
            say(self, beat, "square", GrowFromEdge(pairs[0][2], UP), FadeIn(pairs[0][3], shift=rise))
            say(self, beat, "square", GrowFromEdge(pairs[1][2], UP), into=0.3)
            say(self, beat, "square", FadeIn(pairs[1][3], shift=rise),
                # hugging the square: GAP.xs out, its edge ran along the count under it
                FadeIn(glow(pairs[1][2], color=S.WARNING, buff=GAP.xxs, opacity=0.12)), into=0.65)
        # subwords: common words whole, rare ones in pieces, and bytes underneath everything
        with self.beat("subwords") as beat:
            title = self.headline("subwords-title")
            room = S.CONTENT.with_(top=title.get_bottom()[1] - GAP.m)
            rows, right = self.subwords_picture(f, room)
            self.play(*self.picture_out(), FadeIn(title, shift=-rise), run_time=beat.span(0.6))
            say(self, beat, "common", FadeIn(rows[0], shift=RIGHT * GAP.s))
            say(self, beat, "common", FadeIn(rows[1], shift=RIGHT * GAP.s), into=0.45)
            say(self, beat, "bytes", FadeIn(right[0], shift=rise), FadeIn(glow(rows[1][2], buff=GAP.xs)))
            missing = f["missing_bytes"]
            say(self, beat, "bytes", FadeIn(right[1], shift=rise), FadeIn(glow(rows[1][0], buff=GAP.xs)),
                into=0.2 if missing else 0.4)
            if missing:     # "...the N it lacks are rare control codes...": those cells of the grid, in red
                say(self, beat, "bytes", *[right[0][b].animate.set_fill(S.WARNING, opacity=1) for b in missing],
                    into=0.55)
            say(self, beat, "bytes", FadeIn(glow(right[0], buff=GAP.xs, opacity=0.12)), into=0.8 if missing else 0.75)


def symbol_text(symbol: str) -> str:
    return visible_bytes(tokenizer.symbol_bytes(symbol))


def ladder_row(symbols: list[str], hot: int | None, size: int = S.SMALL) -> VGroup:
    """One step of the merge replay as small chips; chip `hot` is the one just merged."""
    row = VGroup()
    for k, s in enumerate(symbols):
        colour = S.TOKEN if k == hot else S.MUTED
        chip = TokenChip(symbol_text(s), color=colour, size=size)
        if k != hot:
            chip.text_mob.set_color(S.INK)
        row.add(chip)
    return row.arrange(RIGHT, buff=GAP.xs)


class Merges(TokensScene):
    """Byte-pair encoding replayed on a word of the prompt with the real merge ranks."""

    def build(self):
        f = self.facts
        lad = f["ladder"]
        vf = f["vocab"]
        steps, merges = lad["steps"], lad["merges"]
        header = VGroup(label(self.text("bpe-header"), S.BODY_SIZE, S.INK),
                        TokenChip(lad["word"], size=S.BODY_SIZE)).arrange(S.END, buff=GAP.m)
        header.move_to(UP * S.HEADLINE_Y)
        rows = VGroup()
        for k, symbols in enumerate(steps):
            hot = merges[k - 1]["index"] if k > 0 else None
            chips = ladder_row(symbols, hot)
            if k == 0:
                left = label(self.text("ladder-bytes", n=len(symbols)), S.SMALL, S.MUTED)
                right = label("", S.SMALL)
            else:
                m = merges[k - 1]
                left = label(self.text("ladder-merge", k=k), S.SMALL, S.MUTED)
                right = label(self.text("ladder-pair", left=S.show_token(symbol_text(m["pair"][0])),
                                        right=S.show_token(symbol_text(m["pair"][1])), rank=N.fmt_int(m["rank"])),
                              S.SMALL, S.MUTED, mono=True)
            rows.add(VGroup(left, chips, right))
        final_ids = "  ".join(str(i) for i in lad["ids"])
        result = label(self.text("ladder-result", count=len(lad["ids"]), ids=final_ids), S.BODY_SIZE,
                       S.TOKEN, mono=True)
        # columns: step name | chips | merged pair and its rank in vocab.bpe
        table(rows, "LLL", gaps=GAP.l, row_gap=GAP.xxs, rtl_aligns="RRR")
        last = rows[-1][2] if len(rows) > 1 else rows[-1][1]
        result.next_to(last, S.END, buff=GAP.l)     # the last merge's row ends with the id
        ladder = VGroup(rows, result)
        room = S.CONTENT.with_(top=header.get_bottom()[1] - GAP.l)    # the content box under the header
        place_in(fit_to(ladder, room, grow=1.5), room, UP)
        with self.beat("bytes") as beat:
            # "where do the pieces come from?": one piece of the prompt; then "byte-pair encoding" names it
            say(self, beat, "question", FadeIn(header[1], shift=DOWN * GAP.s))
            say(self, beat, "bpe", FadeIn(header[0], shift=DOWN * GAP.s),
                Swell(header[1], color=S.TOKEN, scale_factor=1.2))
            # "take <word> from our prompt": the prompt's pieces, the word lit
            prompt_row = token_row(self.chip_texts, max_width=S.CONTENT_W)
            fit_to(prompt_row, width=0.6 * S.CONTENT_W, height=0.8, grow=1.6)
            place_in(prompt_row, S.CONTENT, DOWN, buff=GAP.l)
            picked = [c for c, t in zip(prompt_row, self.chip_texts) if t == lad["word"]]
            picks = VGroup(*[glow(c, opacity=0.3) for c in picked[:1]])
            say(self, beat, "word", FadeIn(prompt_row, shift=UP * GAP.xs), FadeIn(picks))
            beat.at("word", into=0.3)
            self.play(FadeIn(rows[0][0]), LaggedStart(*[FadeIn(c, shift=DOWN * GAP.s) for c in rows[0][1]],
                                                       lag_ratio=0.5), run_time=beat.span(0.8))
        with self.beat("merges") as beat:
            self.play(FadeOut(prompt_row), FadeOut(picks), run_time=0.4)
            # one merge per step across the sentence that describes them, then the outcome
            n = max(1, len(rows) - 1)
            for k, r in enumerate(rows[1:]):
                say(self, beat, "merge", FadeIn(r[0]), FadeIn(r[2]), FadeIn(r[1], shift=DOWN * GAP.s),
                    into=0.15 + 0.85 * k / n, run_time=min(1.0, beat.span(0.8 / n)))
            last = glow(rows[-1][1])
            say(self, beat, "outcome", FadeIn(last))
            say(self, beat, "outcome", FadeIn(result, shift=UP * GAP.s), into=0.6)
            # "a common word is merged all the way": the ranks, low for frequent pairs, and the one id
            ranks = VGroup(*[r[2] for r in rows[1:]])
            rank_note = fit_lines(self.text("rank-note"), S.SMALL, S.INK, S.CONTENT_W)
            keep_inside(below(rank_note, ladder, buff=GAP.l), S.CONTENT)
            say(self, beat, "common", FadeIn(rank_note, shift=UP * GAP.xs),
                *([FadeIn(glow(ranks, color=S.MUTED, buff=GAP.xs, opacity=0.12))] if len(ranks) else []))
            say(self, beat, "common", Swell(result, color=S.TOKEN), FadeIn(glow(result, buff=GAP.xs)), into=0.5)
        with self.beat("vocab") as beat:
            strip, parts, total, order_note = self.vocab_picture(vf)
            marks = self.prompt_callouts(strip)
            self.callout_chips = list(marks[0])
            self.play(*self.picture_out(), run_time=beat.share(0.12))
            # bytes, merges, marker: each part of the list as it is named, then the total
            for k, part in enumerate(parts):
                say(self, beat, "parts", FadeIn(strip.parts[k], shift=RIGHT * GAP.s), FadeIn(part, shift=UP * GAP.xs),
                    into=(0.2, 0.45, 0.75)[k])
            say(self, beat, "total", FadeIn(total, scale=1.1), FadeIn(glow(strip, buff=GAP.xs, opacity=0.1)))
            # "an id is a place in this list": the prompt's ids on the strip, the earliest merges at the left
            say(self, beat, "order", FadeOut(total), FadeIn(order_note, shift=UP * GAP.xs), Create(marks[2]))
            say(self, beat, "order", Create(marks[1]), LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in marks[0]],
                                                                  lag_ratio=0.2), into=0.35)
            hot = [c for c in marks[0] if c.token_id == f["case_ids"][1]]
            if hot:
                say(self, beat, "order", FadeIn(glow(hot[0], buff=GAP.xs)), into=0.7)

    def vocab_picture(self, vf):
        """The vocabulary as one long strip (VocabStrip), its three parts named under it, the total above."""
        order = self.facts["vocab_order"] if self.facts["compare"] else None
        strip = VocabStrip(vf.byte_tokens, vf.merges, vf.special, S.CONTENT_W - GAP.xl, GAP.xl, GAP.l, order=order)
        place_in(strip, S.CONTENT, y=S.CONTENT_Y - GAP.l)
        parts = VGroup()
        if order:           # another model: its parts in id order, special tokens named as such
            special = (self.tok.tok.id_to_token(self.tok.special_ids()[0]) if vf.special == 1
                       else self.text("vocab-special"))
            named = {"bytes": self.text("vocab-bytes"), "merges": self.text("vocab-merges"), "special": special}
            kinds = [(N.fmt_int(n), named[k], k == "special" and vf.special == 1) for k, n in order]
        else:
            kinds = [(N.fmt_int(vf.byte_tokens), self.text("vocab-bytes"), False),
                     (N.fmt_int(vf.merges), self.text("vocab-merges"), False),
                     (N.fmt_int(vf.special), tokenizer.EOT, True)]
        for k, (num, what, mono) in enumerate(kinds):
            if k >= len(strip.parts):
                break
            part = VGroup(label(num, S.NUMBER_SIZE, S.TOKEN, mono=True),
                          label(what, S.SMALL, S.MUTED, mono=mono)).arrange(DOWN, buff=GAP.xs)
            below(part, strip.parts[k], buff=GAP.s)
            parts.add(part)
        if order:
            # narrow parts side by side from the strip's start, each as near its part as the one before allows
            x = strip.get_left()[0]
            for part, piece in zip(parts, strip.parts):
                part.set_x(max(x + part.width / 2, min(piece.get_x(), strip.get_right()[0] - part.width / 2)))
                x = part.get_right()[0] + GAP.l
        else:
            parts[0].align_to(strip, LEFT)
            parts[-1].align_to(strip, RIGHT)
        total = VGroup(label(N.fmt_int(vf.total), S.TITLE_SIZE, S.TOKEN, mono=True),
                       label(self.text("vocab-tokens"), S.SMALL, S.MUTED)).arrange(RIGHT, buff=GAP.s)
        above(total, strip, buff=GAP.l)
        order_note = fit_lines(self.text("learned-order"), S.SMALL, S.INK, S.CONTENT_W)
        below(order_note, parts, buff=GAP.l)
        keep_inside(order_note, S.CONTENT)
        return strip, parts, total, order_note

    def prompt_callouts(self, strip):
        """The prompt's ids (and " the"'s, when the prompt lacks it) as chips above their places on the strip."""
        f = self.facts
        pairs = dict(zip(f["ids"], self.chip_texts))
        if f["case_ids"][1] not in pairs:
            pairs[f["case_ids"][1]] = f["case_words"][1]
        ids = list(pairs)[:8]
        return callouts(strip, [pairs[i] for i in ids], ids, S.SMALL, GAP.xl)


class Compression(TokensScene):
    """Characters per token for the prompt, and for a line of Urdu that costs far more."""

    def bar_rows(self, rows: list[tuple[str, float, str, object]], bar_max: float = 6.0) -> VGroup:
        """Labelled horizontal bars: (name, value, shown value, colour)."""
        top = max(v for _, v, _, _ in rows) or 1.0
        out = VGroup()
        for name, v, shown, colour in rows:
            n = fit_width(label(name, S.SMALL, S.INK), 4.2)
            bar = Rectangle(width=max(0.05, bar_max * v / top), height=0.36, stroke_width=0,
                            fill_color=colour, fill_opacity=0.9)
            t = label(shown, S.SMALL, S.INK, mono=True)
            out.add(VGroup(n, bar, t))
        for n, bar, t in out:
            t.next_to(bar, RIGHT, buff=GAP.s)
        table([(n, VGroup(bar, t)) for n, bar, t in out], "LL", gaps=GAP.m, row_gap=GAP.m)
        return out

    def build(self):
        f = self.facts
        T, chars = f["T"], f["chars"]
        with self.beat("ratio") as beat:
            cmp = f["compare"]
            # the count of ways the title names is the count of bars: a third (GPT-2's tokens) beside another model
            title = label(self.text("ratio-title-three" if cmp else "ratio-title"), S.BODY_SIZE, S.INK)
            title.move_to(UP * S.HEADLINE_Y)
            if cmp:     # another model: its own tokens of the prompt (no begin-of-text), then GPT-2's
                T = cmp["text_T"]
            counts = [chars, T]
            rows = [(self.text("as-characters"), chars, N.fmt_int(chars), S.MUTED),
                    (self.text("as-tokens"), T, N.fmt_int(T), S.TOKEN)]
            if cmp:
                counts.append(len(cmp["gpt2_ids"]))
                rows.append((self.text("as-gpt2-tokens"), counts[2], N.fmt_int(counts[2]), S.ATTENTION))
            bars = self.bar_rows(rows)
            fit_to(bars, width=S.CONTENT_W - 2.5, height=1.8, grow=1.6)   # room for "N steps"
            ratio = label(self.text("ratio", chars=N.fmt_int(chars), T=N.fmt_int(T), cpt=N.fmt_ratio(f["cpt"])),
                          S.BODY_SIZE, S.TOKEN)
            fit_width(ratio, S.CONTENT_W)
            # "18 steps instead of 5": each bar cut into the steps a model would take
            steps = VGroup()
            for (_, bar, shown), n in zip(bars, counts):
                cuts = VGroup(*[Line(bar.get_corner(UP + LEFT) + RIGHT * bar.width * k / n,
                                     bar.get_corner(DOWN + LEFT) + RIGHT * bar.width * k / n,
                                     color=S.BACKGROUND, stroke_width=3) for k in range(1, n)]) if n <= 200 else VGroup()
                steps.add(VGroup(cuts, label(self.text("steps", n=N.fmt_int(n)), S.BODY_SIZE, S.INK).next_to(shown, RIGHT, buff=GAP.l)))
            # bars, their values and the "N steps" labels centred together
            shift = -VGroup(bars, *[st[1] for st in steps]).get_center()[0]
            bars.shift(RIGHT * shift)
            steps.shift(RIGHT * shift)
            below(ratio, bars, buff=GAP.xl).set_x(S.CONTENT.x)
            below(VGroup(bars, steps, ratio), title, buff=GAP.l)
            theirs = VGroup()
            if cmp:     # GPT-2's own pieces of the same prompt, with GPT-2's ids, under the ratio
                name = label(self.text("gpt2-pieces"), S.SMALL, S.ATTENTION)
                gchips = chip_flow(cmp["gpt2_tokens"], cmp["gpt2_ids"], max_width=S.CONTENT_W, size=S.SMALL)
                theirs = VGroup(name, gchips).arrange(DOWN, buff=GAP.m)     # room for the chips' outline (glow)
                fit_width(theirs, S.CONTENT_W)
                below(theirs, ratio, buff=GAP.l).set_x(S.CONTENT.x)
                whole = VGroup(title, bars, steps, ratio, theirs)
                if whole.get_bottom()[1] < S.CONTENT.bottom:       # the whole picture above the captions
                    fit_to(VGroup(bars, steps, ratio, theirs), S.CONTENT.with_(top=title.get_bottom()[1] - GAP.l))
                    place_in(VGroup(bars, steps, ratio, theirs), S.CONTENT.with_(top=title.get_bottom()[1] - GAP.l), UP)
            self.play(FadeIn(title), run_time=beat.span(0.5))
            say(self, beat, "became", FadeIn(bars[0], shift=RIGHT * GAP.s))
            say(self, beat, "became", FadeIn(bars[1], shift=RIGHT * GAP.s), into=0.3)
            say(self, beat, "became", FadeIn(ratio, shift=UP * GAP.xs), into=0.6)
            if cmp:
                say(self, beat, "gpt2", FadeIn(bars[2], shift=RIGHT * GAP.s), FadeIn(theirs[0]))
                say(self, beat, "gpt2", LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in theirs[1]],
                                                    lag_ratio=0.2), into=0.4)
                # "...so the ids differ" / "...more pieces": GPT-2's pieces and their ids, lit
                theirs.add(glow(theirs[1], color=S.ATTENTION, buff=GAP.xs))     # faded out with them
                say(self, beat, "gpt2", FadeIn(theirs[2]), into=0.75)
            lit = glow(bars[0], color=S.INK, opacity=0.12)
            say(self, beat, "letters", FadeIn(steps[0]), FadeIn(lit), into=0.1)
            say(self, beat, "letters", FadeIn(VGroup(*steps[1:])), Transform(lit, glow(bars[1], opacity=0.18)),
                into=0.75)
        with self.beat("other") as beat:
            self.play(FadeOut(title), FadeOut(bars), FadeOut(ratio), FadeOut(steps), FadeOut(lit),
                      *([FadeOut(theirs)] if len(theirs) else []), run_time=beat.share(0.1))
            line = label(f["other_text"], S.TITLE_SIZE, S.INK)
            n_chars = label(self.text("character-count", count=f["other_chars"], n=N.fmt_int(f["other_chars"])),
                            S.SMALL, S.MUTED)
            top = VGroup(line, n_chars).arrange(S.END, buff=GAP.l).move_to(UP * S.HEADLINE_Y)
            texts = [visible_bytes(self.tok.token_bytes(i)) for i in f["other_ids"]]
            chips = VGroup(*[TokenChip(t, i, size=S.BODY_SIZE) for t, i in zip(texts, f["other_ids"])])
            chips.arrange(RIGHT, buff=GAP.m, aligned_edge=UP)
            for c, t in zip(chips, texts):
                if "<" in t:  # a loose byte: muted, it is not a character on its own
                    c.box.set_stroke(S.MUTED)
                    c.text_mob.set_color(S.MUTED)
            below(fit_to(chips, width=S.CONTENT_W, height=1.6), top, buff=GAP.l)
            loose = next((t for t in texts if "<" in t), None)
            example = loose[loose.index("<"):loose.index(">") + 1] if loose else None
            n_tokens = self.text("token-count", count=len(f["other_ids"]), n=N.fmt_int(len(f["other_ids"])))
            tally = label(self.text("tally-loose", tokens=n_tokens, example=example) if example else n_tokens,
                          S.SMALL, S.MUTED)
            below(fit_width(tally, S.CONTENT_W), chips)
            compare = self.bar_rows([(self.text("our-prompt"), f["cpt"], N.fmt_ratio(f["cpt"]), S.TOKEN),
                                     (self.text("the-greeting"), f["other_cpt"], N.fmt_ratio(f["other_cpt"]), S.WARNING)],
                                    bar_max=5.0)
            heading = label(self.text("cpt-heading"), S.SMALL, S.MUTED)
            cmp_group = VGroup(heading, compare).arrange(DOWN, buff=GAP.m, aligned_edge=S.START)
            fit_width(cmp_group, S.CONTENT_W)
            keep_inside(below(cmp_group, tally, buff=GAP.l).set_x(S.CONTENT.x), S.CONTENT)   # above the caption band
            # the greeting (its characters), its tokens, the ratio; then the loose bytes; then English
            say(self, beat, "greeting", FadeIn(top))
            say(self, beat, "greeting", LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in chips], lag_ratio=0.1),
                FadeIn(tally), into=0.45)
            say(self, beat, "greeting", FadeIn(cmp_group, shift=UP * GAP.xs), into=0.8)
            loose_chips = [c for c, t in zip(chips, texts) if "<" in t]
            if loose_chips:
                # outlined, not tinted: a tint over the chip's muted letters left them at 3:1 (WCAG 1.4.3)
                say(self, beat, "loose", *[FadeIn(glow(c, color=S.WARNING, buff=GAP.xxs, opacity=0)) for c in loose_chips])
            say(self, beat, "loose", FadeIn(glow(tally, color=S.WARNING, buff=GAP.xs, opacity=0.12)),
                into=0.0 if not loose_chips else 0.45)
            say(self, beat, "english", FadeIn(glow(compare[0])))
            if f["compare"]:
                # another model's wording: "...this script was rare" (the greeting), "it was seldom merged"
                # (its pieces), "so it breaks into more, smaller pieces" (the pieces, one by one)
                say(self, beat, "english", FadeIn(glow(line, color=S.WARNING, buff=GAP.xs)), into=0.3)
                say(self, beat, "seldom", FadeIn(glow(chips, color=S.WARNING, buff=GAP.xs, opacity=0.1)))
                say(self, beat, "smaller", LaggedStart(*[Swell(c, color=S.WARNING, scale_factor=1.15) for c in chips],
                                                       lag_ratio=0.15))
            else:
                say(self, beat, "english", FadeIn(glow(chips, color=S.WARNING, buff=GAP.xs, opacity=0.1)), into=0.5)
            # "more tokens: more to pay for, less of the context left"
            cost = fit_lines(self.text("cost-note"), S.SMALL, S.WARNING, S.CONTENT_W)
            keep_inside(below(cost, cmp_group, buff=GAP.s), S.CONTENT)
            say(self, beat, "cost", FadeIn(glow(compare[1], color=S.WARNING)), FadeIn(cost, shift=UP * GAP.xs))
            say(self, beat, "cost", Swell(compare[1][1], color=S.WARNING), into=0.5)
        with self.beat("handoff") as beat:
            cmp = f["compare"]
            strip = VocabStrip(f["vocab"].byte_tokens, f["vocab"].merges, f["vocab"].special, S.CONTENT_W - GAP.xl,
                               GAP.xl, GAP.l, order=f["vocab_order"] if cmp else None)
            place_in(strip, S.CONTENT, y=S.CONTENT_Y)
            chips, lines, ticks = callouts(strip, self.chip_texts[:8], f["ids"][:8], S.SMALL, GAP.xl)
            list_name = label(self.text("vocab-list", n=N.fmt_int(f["vocab"].total)), S.SMALL, S.MUTED)
            below(list_name, strip, buff=GAP.m)       # clear of the outline that lights the strip (glow)
            # the next chapter's table: one row per id, each a row of numbers
            nxt = fit_lines(self.text("next-chapter"), S.SMALL, S.INK, S.CONTENT_W / 2)
            rows = VGroup(*[Rectangle(width=nxt.width, height=GAP.s, stroke_color=S.MUTED, stroke_width=1,
                                      fill_color=S.PANEL, fill_opacity=1) for _ in range(5)]).arrange(DOWN, buff=GAP.none)
            first = next(k for k, c in enumerate(chips) if c.token_id == f["ids"][0])
            lit_row = rows[2].copy().set_fill(S.TOKEN, opacity=0.8)
            table_part = VGroup(rows, lit_row, nxt)
            nxt.next_to(rows, S.END, buff=GAP.m)
            sizes = VGroup()
            if cmp:     # what the vocabulary costs: one row of d numbers per entry, and GPT-2 small's table
                sizes = VGroup(
                    label(self.text("table-size", V=N.fmt_int(cmp["vocab"]), d=N.fmt_int(cmp["d"]),
                                    n=N.fmt_int(cmp["table"])), S.SMALL, S.TOKEN),
                    label(self.text("table-size-gpt2", V=N.fmt_int(cmp["gpt2_vocab"]), d=N.fmt_int(cmp["gpt2_d"]),
                                    n=N.fmt_int(cmp["gpt2_table"])), S.SMALL, S.MUTED)).arrange(
                    DOWN, buff=GAP.m, aligned_edge=S.START)     # room for the outline that lights each, and its gap
                # under the rows and their note, the whole width: beside the rows only, they shrank below legible
                fit_width(sizes, S.CONTENT_W)
                sizes.next_to(VGroup(rows, nxt), DOWN, buff=GAP.m, aligned_edge=S.START)
                table_part.add(sizes)
            below(table_part, list_name, buff=GAP.l)
            # a table too tall for the room under the list (the sizes' lines, each with its outline's gap): the
            # whole picture up, as far as the callouts' room above allows, before the table is pushed up under it
            short = min(S.CONTENT.bottom - table_part.get_bottom()[1], S.CONTENT.top - chips.get_top()[1])
            if short > 0:
                VGroup(strip, chips, lines, ticks, list_name, table_part).shift(UP * short)
            keep_inside(table_part, S.CONTENT)
            x0 = strip.x_of(f["ids"][0])
            drop = Arrow([x0, list_name.get_bottom()[1], 0], lit_row.get_top(), buff=GAP.xs, color=S.TOKEN,
                         stroke_width=4)
            self.play(*self.picture_out(), FadeIn(strip.parts, shift=RIGHT * GAP.s), FadeIn(list_name),
                      run_time=beat.span(0.6))
            say(self, beat, "places", Create(ticks), Create(lines),
                LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in chips], lag_ratio=0.2))
            say(self, beat, "places", FadeIn(glow(chips[first], buff=GAP.xs)), into=0.6)
            say(self, beat, "next", FadeIn(rows, shift=UP * GAP.xs), FadeIn(nxt))
            say(self, beat, "next", GrowArrow(drop), FadeIn(lit_row), into=0.5)
            if cmp:
                # "a row for every entry": the list and the table lit together; "a bigger vocabulary costs a
                # bigger table": both swell; then this model's size, then GPT-2 small's, each as it is read
                say(self, beat, "table", FadeIn(glow(rows, buff=GAP.xs, opacity=0.1)),
                    FadeIn(glow(strip.parts, buff=GAP.xs, opacity=0.1)))
                say(self, beat, "bigger", Swell(strip.parts, color=S.TOKEN, scale_factor=1.05),
                    Swell(VGroup(rows, lit_row, drop), color=S.TOKEN, scale_factor=1.1))   # the arrow stays on top
                # a label's gap inside each outline (a hairline's buff drew the stroke against the letters)
                lit = glow(sizes[0], buff=GAP.xs)
                say(self, beat, "here", FadeIn(sizes[0], shift=UP * GAP.xs), FadeIn(lit))
                say(self, beat, "gpt2", FadeIn(sizes[1], shift=UP * GAP.xs),
                    Transform(lit, glow(sizes[1], color=S.ATTENTION, buff=GAP.xs)))


SCENES = [Prompt, SameWord, WhyPieces, Merges, Compression]
