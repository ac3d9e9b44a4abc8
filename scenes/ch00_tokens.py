"""Chapter 00 — from text to token ids. The Σ meter reads 0 throughout: tokenizing is lookups.

Everything shown comes from the bundle (prompt, ids, token texts) or from the real GPT-2
tokenizer files (vocabulary, merge ranks), via data.facts.ch00.token_facts.
"""
from __future__ import annotations

import textwrap

from manim import (DOWN, LEFT, RIGHT, UP, AddTextLetterByLetter, Arrow, FadeIn, FadeOut, GrowArrow, LaggedStart,
                   Line, Rectangle, RoundedRectangle, Succession, SurroundingRectangle, Transform, VGroup)

from data import tokenizer
from data.facts.ch00 import token_facts
from scenes import style as S
from scenes.base import ChapterScene
from scenes.follow import Swell, glow, say
from scenes.layout import GAP, below, fit_to, keep_inside, place_in, table
from scenes.text import fit_width, label, ltr_safe
from scenes.widgets import TokenChip, token_row
from words import numbers as N


visible_bytes = S.visible_bytes   # whole characters as themselves, stray bytes as <D8> (one helper, every chapter)


# ascender to descender of unaccented Latin ("hp") per point of font size, in DejaVu Sans and Sans Mono
# alike, measured offline (building a Text here would add one to every scene)
LATIN_LINE_PER_PT = 0.01345


def accent_room(*texts) -> float:
    """How much taller than a line of unaccented Latin these labels are (another language's accents,
    brackets): a fit by height grants it, so that what is fitted with such titles keeps English's scale."""
    return max([0.0] + [t.height - LATIN_LINE_PER_PT * t.font_size for t in texts])


def chip_text(text: str, token_id: int) -> str:
    """The bundle's token text, unless it is part of a character (U+FFFD): then its bytes."""
    return visible_bytes(tokenizer.token_bytes(token_id)) if "\ufffd" in text else text


def wrapped_lines(text: str, width: int) -> list[str]:
    """The prompt in lines of at most `width` characters (newlines and tabs made visible)."""
    flat = text.replace("\n", "↵ ").replace("\t", "⇥ ")
    return textwrap.wrap(flat, width, break_long_words=True, drop_whitespace=True) or [flat]


def text_block(text: str, size: int, width_chars: int, max_w: float, color=S.INK, mono=False) -> VGroup:
    lines = VGroup(*[label(line, size, color, mono=mono) for line in wrapped_lines(text, width_chars)])
    lines.arrange(DOWN, buff=GAP.s, aligned_edge=LEFT)
    return fit_width(lines, max_w)


def flow(mobs, max_width: float, hbuff: float = 0.15, vbuff: float = 0.3) -> VGroup:
    """Lay mobjects out like words in a paragraph: left to right, a new line when the width is used."""
    lines, line, used = [], [], 0.0
    for m in mobs:
        if line and used + hbuff + m.width > max_width:
            lines.append(line)
            line, used = [], 0.0
        used += (hbuff if line else 0.0) + m.width
        line.append(m)
    if line:
        lines.append(line)
    block = VGroup(*[VGroup(*ln).arrange(RIGHT, buff=hbuff, aligned_edge=UP) for ln in lines])
    block.arrange(DOWN, buff=vbuff, aligned_edge=LEFT)
    return VGroup(*mobs)


def chip_flow(texts, ids=None, max_width: float = S.CONTENT_W, size: int = S.BODY_SIZE) -> VGroup:
    """Token chips (with ids beneath when given) flowing over as many lines as they need."""
    chips = [TokenChip(t, None if ids is None else i, size=size)
             for t, i in zip(texts, ids if ids is not None else [None] * len(texts))]
    return flow(chips, max_width)


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
        self.chip_texts = [chip_text(t, i) for t, i in zip(self.facts["tokens"], self.facts["ids"])]
        # GPT-2's own strings drawn besides the prompt's tokens (the tokenizer's, never the catalog's):
        # the three spellings, the replayed word's pieces, the end-of-text marker, the greeting and its tokens
        f, lad = self.facts, self.facts["ladder"]
        pieces = {*f["case_words"], lad["word"], *(symbol_text(s) for step in lad["steps"] for s in step),
                  tokenizer.EOT, f["other_text"], *(visible_bytes(tokenizer.token_bytes(i)) for i in f["other_ids"])}
        self.gpt2_texts = {form for p in pieces for form in (p, S.show_token(p), ltr_safe(p), ltr_safe(S.show_token(p)))}


class Prompt(TokensScene):
    """The prompt typed out, cut into tokens, each token swapped for its id."""
    show_title = True

    def build(self):
        f = self.facts
        with self.beat("intro") as beat:
            big = text_block(f["prompt"], S.TITLE_SIZE, 40, S.CONTENT_W)
            fit_to(big, width=S.CONTENT_W, height=2.2, grow=1.6)
            self.gpt2_texts.update(line.original_text for line in big)     # the prompt, in lines
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
            self.play(Succession(*[AddTextLetterByLetter(line, time_per_char=per_char,
                                                         run_time=max(0.2, per_char * len(line.original_text)))
                                   for line in big]), run_time=typing)
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
            ring = glow(self.meter, color=S.FLOPS, opacity=0.15)
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
            say(self, beat, "invisible", *[c[1].text_mob.animate.set_opacity(0.25) for c in cols], into=0.5)


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
        with self.beat("vocab") as beat:
            self.play(FadeOut(header), FadeOut(ladder), FadeOut(last), run_time=beat.share(0.12))
            parts = [(N.fmt_int(vf.byte_tokens), self.text("vocab-bytes")), (N.fmt_int(vf.merges), self.text("vocab-merges")),
                     (N.fmt_int(vf.special), tokenizer.EOT)]
            boxes = VGroup()
            for num, what in parts:
                n_mob = label(num, S.TITLE_SIZE, S.TOKEN, mono=True)
                w_mob = label(what, S.SMALL, S.MUTED, mono=what == tokenizer.EOT)
                inner = VGroup(n_mob, w_mob).arrange(DOWN, buff=GAP.s)
                box = SurroundingRectangle(inner, buff=(GAP.m, GAP.s), corner_radius=0.1, color=S.TOKEN,
                                           stroke_width=2, fill_color=S.PANEL, fill_opacity=1)
                boxes.add(VGroup(box, inner))
            total = VGroup(label(N.fmt_int(vf.total), S.TITLE_SIZE, S.TOKEN, mono=True),
                           label(self.text("vocab-tokens"), S.SMALL, S.MUTED)).arrange(DOWN, buff=GAP.s)
            ops = [label(s, S.TITLE_SIZE, S.MUTED) for s in ("+", "+", "=")]
            eq = VGroup(boxes[0], ops[0], boxes[1], ops[1], boxes[2], ops[2], total).arrange(RIGHT, buff=GAP.l)
            fit_width(eq, S.CONTENT_W)
            src = below(label(self.text("vocab-source"), S.SMALL, S.MUTED), eq, buff=GAP.l)
            place_in(VGroup(eq, src), S.CONTENT)
            # bytes, merges, marker: each box as it is named, then the total
            for k, m in enumerate((eq[:1], eq[1:3], eq[3:6])):
                say(self, beat, "parts", FadeIn(m, shift=UP * GAP.s), into=(0.25, 0.5, 0.78)[k])
            say(self, beat, "total", FadeIn(total, scale=1.1), FadeIn(src), FadeIn(glow(total, buff=GAP.s)))


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
            title = label(self.text("ratio-title"), S.BODY_SIZE, S.INK).move_to(UP * S.HEADLINE_Y)
            bars = self.bar_rows([(self.text("as-characters"), chars, N.fmt_int(chars), S.MUTED),
                                  (self.text("as-tokens"), T, N.fmt_int(T), S.TOKEN)])
            fit_to(bars, width=S.CONTENT_W - 2.5, height=1.8, grow=1.6)   # room for "N steps"
            ratio = label(self.text("ratio", chars=N.fmt_int(chars), T=N.fmt_int(T), cpt=N.fmt_ratio(f["cpt"])),
                          S.BODY_SIZE, S.TOKEN)
            fit_width(ratio, S.CONTENT_W)
            # "18 steps instead of 5": each bar cut into the steps a model would take
            steps = VGroup()
            for (_, bar, shown), n in zip(bars, (chars, T)):
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
            self.play(FadeIn(title), run_time=beat.span(0.5))
            say(self, beat, "became", FadeIn(bars[0], shift=RIGHT * GAP.s))
            say(self, beat, "became", FadeIn(bars[1], shift=RIGHT * GAP.s), into=0.3)
            say(self, beat, "became", FadeIn(ratio, shift=UP * GAP.xs), into=0.6)
            lit = glow(bars[0], color=S.INK, opacity=0.12)
            say(self, beat, "letters", FadeIn(steps[0]), FadeIn(lit), into=0.1)
            say(self, beat, "letters", FadeIn(steps[1]), Transform(lit, glow(bars[1], opacity=0.18)), into=0.75)
        with self.beat("other") as beat:
            self.play(FadeOut(title), FadeOut(bars), FadeOut(ratio), FadeOut(steps), FadeOut(lit), run_time=beat.share(0.1))
            line = label(f["other_text"], S.TITLE_SIZE, S.INK)
            n_chars = label(self.text("character-count", count=f["other_chars"], n=N.fmt_int(f["other_chars"])),
                            S.SMALL, S.MUTED)
            top = VGroup(line, n_chars).arrange(S.END, buff=GAP.l).move_to(UP * S.HEADLINE_Y)
            texts = [visible_bytes(tokenizer.token_bytes(i)) for i in f["other_ids"]]
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
                say(self, beat, "loose", *[FadeIn(glow(c, color=S.WARNING, buff=GAP.xxs)) for c in loose_chips])
            say(self, beat, "english", FadeIn(glow(compare[0])))


SCENES = [Prompt, SameWord, Merges, Compression]
