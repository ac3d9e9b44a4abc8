"""ChapterScene: the fixed furniture every scene of the film shares.

* made from its SceneInputs (the bundle, where its cues go, the voice), given explicitly:
  `Scene(SceneInputs(bundle, cues, voice))` (film/run/render_job.py); it loads the bundle (scenes
  never run the model)
* chapter title top-left, Σ FLOPs meter top-right, the bottom band kept for captions
* a visible "random weights" mark when the bundle is synthetic
* beat(): one narration line per beat, spoken by the inputs' voice (engine/narration.py; silent
  by default); the animations inside run while it is spoken and the beat waits for the
  line to end; each sentence's (start, end, text) and the clip are recorded as cues for
  captions and the chapter's audio track
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from manim import (DOWN, UP, FadeIn, FadeOut, Group, Mobject, Succession, SurroundingRectangle, Text, Wait, Write,
                   config, there_and_back)

from onepass.data import bundle as bundle_io
from onepass.data.facts.ch06 import loop_facts
from onepass.engine.narration import NarratedScene
from onepass.engine.text import string_of
from onepass.scenes import style as S
from onepass.scenes.follow import Swell, glow
from onepass.scenes.meter import FlopsMeter
from onepass.scenes.text import fit_width, label
from onepass.voiceover import script, services
from onepass.words import numbers as N
from onepass.words.catalog import Words
from onepass.words.markup import Filled


@dataclass(frozen=True)
class SceneInputs:
    """Everything a scene is rendered from besides its code and manim's config (the quality)."""
    bundle: Path                  # the bundle folder (data/bundle.py)
    cues: Path | None = None      # where write_cues() puts the cues (None: nowhere)
    voice: str = "none"           # the narration voice, a `render.py --voice` spec (none: silent)
    lang: str = "en"              # the language of every word (words/catalogs/<lang>, or qps)
    script: Path | None = None    # a lecturer's own words over the catalog (`--script FILE.po`)
    compare: Path | None = None   # a second model's bundle (chapter 07; None: its shape alone, data/facts/ch07.py)


class Beat:
    """The narration line of a beat while it is spoken: its duration, when each of its markers is
    said, and helpers that let the picture follow the words.

    A line marks where the picture moves with named markers (`<bookmark mark="mask"/>` in the
    catalog, words/markup.py); a scene waits on their names and never on wording or sentence counts.

    at(mark, into=0): hold until `mark` is spoken (plus `into` of the rest of its sentence); the
        sentence it falls in becomes the one `span` measures.
    span(f): a run_time that is fraction f of what is left of that sentence (at least 0.2 s).
    share(f): a run_time that is fraction f of the whole line.

    Markers are timed from the speech: by the voice's own time for a marker when it gives one (an
    aligned recording), else by the words the voice timed (word times), else within the sentence's
    time in proportion to the characters before the marker.
    """

    def __init__(self, key: str, line: Filled, duration: float, scene=None, sentences: list[dict] | None = None,
                 line_id: str = "", timed_marks: dict | None = None):
        self.key, self.text, self.duration, self.line_id = key, line.text, duration, line_id
        self.scene = scene
        self.t0 = scene.time if scene is not None else 0.0
        self.sentences = sentences or [{"start": 0.0, "end": duration, "text": line.text}]
        self.current = 0                   # the sentence `span` measures
        self.marks = self._time_marks(line, timed_marks or {})

    def _time_marks(self, line: Filled, timed: dict) -> dict[str, tuple[int, float]]:
        """mark -> (its sentence, its time from the beat's start)."""
        placed = script.sentence_marks(line.text, [s["text"] for s in self.sentences], [k for _, k in line.marks])
        out = {}
        for (name, _), (i, into) in zip(line.marks, placed):
            s = self.sentences[i]
            words = [w for w in s.get("words", ()) if w["offset"] >= into]
            if name in timed:
                t = float(timed[name])
            elif words:
                t = words[0]["start"]
            else:
                t = s["start"] + min(1.0, max(0.0, into / max(1, len(s["text"])))) * (s["end"] - s["start"])
            out[name] = (i, t)
        return out

    def share(self, fraction: float) -> float:
        return max(0.2, self.duration * fraction)

    @property
    def elapsed(self) -> float:
        return (self.scene.time - self.t0) if self.scene is not None else 0.0

    def _sentence(self, i: int) -> dict:
        return self.sentences[min(i, len(self.sentences) - 1)]

    def mark(self, name: str) -> tuple[int, float]:
        if name not in self.marks:
            raise script.ScriptError(f"line {self.line_id or self.key} has no marker {name!r} for the picture to "
                                     f"wait on; it has: {', '.join(self.marks) or 'none'} (add "
                                     f'<bookmark mark="{name}"/> where it is said)')
        return self.marks[name]

    def at(self, name: str, into: float = 0.0) -> None:
        """Hold the picture until marker `name` is spoken (and `into` of the rest of its sentence)."""
        i, t = self.mark(name)
        self.current = i
        if into:
            t += into * (self._sentence(i)["end"] - t)
        gap = t - self.elapsed
        if gap > 1 / 60 and self.scene is not None:
            self.scene.wait(gap)

    def span(self, fraction: float = 1.0, mark: str | None = None) -> float:
        """Fraction of what is left of the current sentence (or of `mark`'s), as a run_time (at least 0.2 s)."""
        s = self._sentence(self.mark(mark)[0] if mark else self.current)
        left = s["end"] - max(self.elapsed, s["start"])
        return max(0.2, left * fraction)


class ChapterScene(NarratedScene):
    chapter: str = "??"
    meter_start: str | None = None   # the default meter_opening: the ledger total before this key
    show_title: bool = False         # only a chapter's first scene shows the big title card

    def __init__(self, inputs: SceneInputs, **kwargs):
        """`inputs`: what this scene renders from; `kwargs`: manim's Scene arguments."""
        self.inputs = inputs          # before manim's set-up, which calls setup()
        super().__init__(**kwargs)

    @property
    def title(self) -> str:
        """The chapter's title, in the film's language (the catalog's chapter-NN)."""
        return self.words.text(f"chapter-{self.chapter}")

    def text(self, name: str, count: int | None = None, **values) -> str:
        """Words for the screen: message `name` of this chapter (chNN:name), or a film-wide id
        (film:name), with its values in; `count` picks the plural form. Values are text, or whole
        numbers; any other number is formatted by words/numbers.py first."""
        mid = name if ":" in name or name.startswith("chapter-") else f"ch{self.chapter}:{name}"
        return self.words.text(mid, count, **values)

    def setup(self):
        config.background_color = S.BACKGROUND
        self.camera.background_color = S.BACKGROUND
        self.bundle = bundle_io.load(Path(self.inputs.bundle))
        if getattr(self.inputs, "compare", None) is not None:
            self.bundle.compare = bundle_io.load(Path(self.inputs.compare))
        self.ledger = self.bundle.ledger()
        self.words = Words.load(self.inputs.lang, self.inputs.script)
        N.set_language(self.words.lang)          # numbers on screen as this language writes them
        S.set_direction(self.words.lang)         # and its words placed from where its reader starts
        self.lines = script.chapter_lines(self.chapter, self.bundle, self.ledger, self.words)
        self.cues: list[dict] = []
        self.set_speech_service(services.make_service(self.inputs.voice, self.inputs.lang))
        self.shown_texts: list[str] = []   # every Text put on screen, for tests and review
        self.timeline: list[tuple[float, float, bool]] = []   # every play: (start, end, only waited)

    def add(self, *mobjects):
        for m in mobjects:
            for sub in m.get_family():
                if isinstance(sub, Text) and sub.get_fill_opacity() > 0:
                    self.shown_texts.append(string_of(sub))
        return super().add(*mobjects)

    # -- the meter ---------------------------------------------------------
    def meter_opening(self) -> tuple[int, str]:
        """What the Σ FLOPs meter shows when this scene opens: its total and its step line ("": none).

        The one place a scene says where its meter starts (default: 0, or the ledger total before
        `meter_start`); scenes then only pay(). It reads nothing but self.bundle, self.ledger and self.words
        (tests/test_meter.py builds every scene's meter from those three alone)."""
        return (self.ledger.before(self.meter_start) if self.meter_start else 0), ""

    def meter_widest(self) -> int:
        """The largest total the meter reaches anywhere in the film for this bundle: one full pass,
        or chapter 06's loop of full passes if more. Every scene's meter is sized for it, so the
        meter has one width and one place in every chapter, however long the prompt."""
        return max(self.ledger.total, loop_facts(self.bundle)["loop_total"])

    def make_meter(self) -> FlopsMeter:
        value, step = self.meter_opening()
        # the meter sits in the corner the reader reaches last: top right, or top left in an RTL film
        return FlopsMeter(value, step, widest=self.meter_widest(),
                          title=self.text("film:meter-title")).to_corner(UP + S.END, buff=S.MARGIN)

    def step_text(self, key: str) -> str:
        """The meter's words for ledger entry `key` ('L0.qkv' -> 'layer 1: q, k, v projections')."""
        return N.step_words(self.words, self.ledger[key], self.bundle.shape)

    # -- furniture ---------------------------------------------------------
    def add_furniture(self):
        self.meter = self.make_meter()
        heading = fit_width(label(self.text("film:heading", chapter=self.chapter, title=self.title), S.SMALL, S.MUTED), 6.5)
        heading.to_corner(UP + S.START, buff=S.MARGIN)     # where the reader starts: top left, or top right
        self.heading = heading
        self.add(self.meter, heading)
        if self.bundle.synthetic:
            mark = label(self.text("film:synthetic-mark", model=self.words.model_name(self.bundle.model_named)),
                         S.SMALL, S.WARNING)
            mark.next_to(heading, DOWN, buff=0.12).align_to(heading, S.START)
            self.random_mark = mark
            self.add(mark)

    def mark_pointers(self, scale: float = 1.15) -> list:
        """Animations that point at the synthetic-weights mark (none where the weights are real):
        it swells from its corner at the frame's margin, so it stays inside the frame in either
        reading direction, under a warm glow that comes and goes."""
        mark = getattr(self, "random_mark", None)
        if mark is None:
            return []
        corner = UP + S.START
        swollen = mark.copy().scale(scale, about_edge=corner)     # the glow lights the mark at its largest
        return [Swell(mark, about_edge=corner, color=S.WARNING, scale_factor=scale),
                FadeIn(glow(swollen, S.WARNING, opacity=0.3), rate_func=there_and_back, remover=True)]

    def point_at_mark(self, beat, name: str, share: float = 0.8):
        """When the line's marker `name` (the honest caveat) is spoken, point at the frame's mark
        that says the same; nothing where the weights are real."""
        pointers = self.mark_pointers()
        if pointers:
            beat.at(name)
            self.play(*pointers, run_time=beat.span(share))

    def title_card(self):
        big = fit_width(label(self.title, 48, S.INK), 11)
        sub = fit_width(label(self.text("film:title-card-sub", chapter=self.chapter,
                                        model=self.words.model_name(self.bundle.model)), S.BODY_SIZE, S.MUTED), 11)
        sub.next_to(big, DOWN, buff=0.3)
        with self.beat("title") as beat:   # narrated, so the opening is not dead air
            self.play(Write(big), FadeIn(sub, shift=UP * 0.2), run_time=min(1.2, beat.share(0.5)))
            self.wait(max(0.0, beat.duration - min(1.2, beat.share(0.5)) - 0.5))
            self.play(FadeOut(big), FadeOut(sub), run_time=0.5)

    def construct(self):
        self.add_furniture()
        if self.show_title:
            self.title_card()
        self.build()
        self.write_cues()

    def build(self):  # pragma: no cover - each scene implements it
        raise NotImplementedError

    # -- narration ---------------------------------------------------------
    @contextmanager
    def beat(self, key: str):
        """Run the animations inside while line `key` is spoken; the beat lasts at least as long
        as the line's clip (its speech plus the short gap after it)."""
        line = self.lines.get(key)
        if line is None:
            raise script.ScriptError(f"chapter {self.chapter} has no narration line for beat {key!r}")
        lid = script.line_id(self.chapter, key)
        with self.voiceover(text=line.text, line_id=lid, marks=list(line.marks), lang=self.words.lang) as tracker:
            sentences = [{k: seg[k] for k in ("start", "end", "text", "words") if k in seg}
                         for seg in tracker.data.get("segments", [])]
            beat = Beat(key, line, tracker.duration, scene=self, sentences=sentences, line_id=lid,
                        timed_marks=tracker.data.get("marks"))
            yield beat
        text = line.text
        start, data = tracker.start_t, tracker.data
        segments = [{"start": start + s["start"], "end": start + s["end"], "text": s["text"]} for s in data["segments"]]
        silent = self.speech_service.silent
        self.cues.append({"beat": key, "start": segments[0]["start"], "end": segments[-1]["end"], "text": text,
                          "segments": segments, "clip_start": start, "cached": data.get("cached"),
                          "clip": None if silent else str(Path(self.speech_service.cache_dir) / data["final_audio"]),
                          "overrun": round(max(0.0, self.time - tracker.end_t), 3),
                          # each marker: when it is said and when its sentence ends (scene time)
                          "marks": {name: [round(start + t, 4), round(start + beat.sentences[i]["end"], 4)]
                                    for name, (i, t) in beat.marks.items()}})

    def add_sound(self, sound_file, time_offset=0, gain=None, **kwargs):
        """Nothing: a scene's MP4 carries no sound. The chapter's narration is built once from the cues
        (onepass.voiceover.mixdown: every clip at its exact sample, encoded once), so the track manim
        would mix for each scene (each clip decoded, overlaid, written out and encoded to AAC: two fifths
        of a voiced scene process's CPU, chapter 00's Merges in Urdu at 480p15) was never heard."""

    # A picture that stays (nearly) still longer than this is dead air to a viewer and to the review's
    # still detector (ffmpeg freezedetect, 4 s): a translation's longer sentence can stretch a hold
    # past it, so such a stretch is broken by a light veil fading in and out over the picture
    # (see breaks_holds for when).
    HOLD_LIMIT = 3.8
    TRACE = 0.8
    # a play that changes less of the frame than this share per second reads as still (a small label
    # fading in slowly, a dim glow); anything more is a visible step. freezedetect's 0.001 at 15 fps
    # is 1.5% of the frame per second at full contrast; the film's paint is about half contrast
    VISIBLE_RATE = 0.03

    @property
    def breaks_holds(self) -> bool:
        """Holds are broken for words that are not the film's English: a translation, or a lecturer's
        own script. English keeps its picture frame for frame (its holds are all under 4 s)."""
        words = getattr(self, "words", None)
        return words is not None and (words.lang != "en" or words.script is not None)

    def _still_for(self) -> float:
        return self.time - getattr(self, "_last_change", 0.0)

    def wait(self, duration: float = 1.0, *args, **kwargs):
        """Hold the picture; where the picture would then have been still for over HOLD_LIMIT, a light
        veil over the picture, fading in and out, breaks the hold (breaks_holds)."""
        subject = None if args or kwargs or not self.breaks_holds else self._picture()
        if subject is None or self._still_for() + duration <= self.HOLD_LIMIT:
            return super().wait(duration, *args, **kwargs)
        if duration < self.TRACE:
            return self.play(self._trace(subject, duration))
        first = min(max(0.0, self.HOLD_LIMIT - self.TRACE - self._still_for()), duration - self.TRACE)
        if first > 1 / 60:
            super().wait(first)
        self.play(self._trace(subject, self.TRACE))
        rest = duration - first - self.TRACE
        return self.wait(rest) if rest > 1 / 60 else None

    def _trace(self, subject: list, run_time: float, lead: float = 0.0):
        """A light veil over the picture fades in and out once (TRACE seconds, `lead` seconds into
        `run_time`): enough of the frame changes for a viewer (and the still detector) to see the
        picture live; nothing on it moves or changes."""
        veil = SurroundingRectangle(Group(*subject), buff=0.15, color=S.MUTED, stroke_width=2, fill_color=S.MUTED,
                                    fill_opacity=0.12, corner_radius=0.1)
        pulse = min(self.TRACE, run_time) / 2
        parts = [Wait(lead)] if lead > 1 / 60 else []
        parts += [FadeIn(veil, run_time=pulse), FadeOut(veil, run_time=pulse)]
        if run_time - lead - 2 * pulse > 1 / 60:
            parts.append(Wait(run_time - lead - 2 * pulse))
        trace = Succession(*parts)
        trace.is_trace = True
        return trace

    @staticmethod
    def _ink(mob) -> float:
        """About how much of the frame a mobject covers with paint: filled shapes by their box, lines and
        outlines by their length times their width (thin arcs drawn across the frame change little)."""
        total = 0.0
        for leaf in mob.family_members_with_points():
            fill = leaf.get_fill_opacity() if hasattr(leaf, "get_fill_opacity") else 1.0
            if fill > 0.05:
                total += leaf.width * leaf.height * fill
            else:
                stroke = leaf.get_stroke_width() if hasattr(leaf, "get_stroke_width") else 0.0
                total += 2 * (leaf.width + leaf.height) * stroke * 0.01
        return total

    def _change_rate(self, animations, run_time: float) -> float:
        """About how much of the frame a play changes per second."""
        ink = sum(self._ink(a.mobject) for a in animations
                  if not isinstance(a, Wait) and isinstance(getattr(a, "mobject", None), Mobject))
        return min(ink / (S.FRAME_W * S.FRAME_H), 1.0) / max(run_time, 1e-3)

    def _furniture(self) -> set[int]:
        """The ids of the meter, the heading and the random-weights mark, with all their parts."""
        return {id(m) for part in (getattr(self, "meter", None), getattr(self, "heading", None),
                                   getattr(self, "random_mark", None)) if part is not None for m in part.get_family()}

    def clear_content(self, *keep):
        """One FadeOut of everything on screen but the furniture and `keep` (top-level mobjects)."""
        aside = self._furniture() | {id(m) for m in keep}
        return FadeOut(Group(*[m for m in self.mobjects if id(m) not in aside]))

    def _picture(self) -> list | None:
        """The picture on screen, the meter and the furniture aside, as its top-level mobjects (None
        when there is none)."""
        aside = self._furniture()
        mobs = []
        for m in self.mobjects:          # (each family listed once: a translation asks at every wait)
            family = m.get_family()
            if family[-1].has_points() and aside.isdisjoint(map(id, family)):
                mobs.append(m)
        return mobs or None

    def play(self, *animations, **kwargs):
        # manim redraws every frame each mobject from the first animated one onwards (in draw
        # order); the meter is added first, so running it would redraw the whole scene each
        # frame. Drawn last instead, only the meter is redrawn while it counts.
        meter = getattr(self, "meter", None)
        if meter is not None and self.mobjects and self.mobjects[-1] is not meter and meter in self.mobjects:
            family = set(meter.get_family())
            if any(getattr(a, "mobject", None) in family for a in animations):
                super().add(meter)        # to the end of the draw order (not re-recorded)
        start = self.time
        waits = all(isinstance(a, Wait) for a in animations)
        run_time = kwargs.get("run_time") or max((getattr(a, "run_time", 1.0) for a in animations), default=1.0)
        # how visible a play is matters only where holds are broken (a translation): English pays nothing
        visible = not waits and self.breaks_holds and (self._change_rate(animations, run_time) >= self.VISIBLE_RATE
                                                       or any(getattr(a, "is_trace", False) for a in animations))
        if not waits and not visible and self.breaks_holds and self._still_for() + run_time > self.HOLD_LIMIT:
            # a step too small to see, at the end of a long hold: a veil beside it
            subject = self._picture()
            if subject is not None:
                lead = min(max(0.0, self.HOLD_LIMIT - self.TRACE - self._still_for()), max(0.0, run_time - self.TRACE))
                animations = (*animations, self._trace(subject, run_time, lead))
                visible = True
        result = super().play(*animations, **kwargs)
        if visible:
            self._last_change = self.time
        # (start, end, still): when the picture changed and when it only held; tests and review read it
        self.timeline.append((start, self.time, all(isinstance(a, Wait) for a in animations)))
        return result

    def pay(self, key: str, *alongside, run_time: float = 1.5, through: str | None = None, step: str | None = None):
        """The one way a scene moves the meter: play it running up to the ledger total after `key` (or
        after `through`: several entries at once), its step line saying the entry's step (or `step`).
        `alongside` are animations played with it, before the meter's (the thing being paid for)."""
        self.pay_total(self.ledger.after(through or key), step or self.step_text(key), *alongside,
                       run_time=run_time)

    def pay_total(self, total: int, step: str, *alongside, run_time: float = 1.5):
        """pay() for a total that no single ledger entry ends at, worked out from the ledger by the
        scene (chapter 06's passes, each a whole ledger; chapter 03's lens adds nothing)."""
        self.play(*alongside, *self.meter.pay(total, step, run_time=run_time), run_time=run_time)

    def write_cues(self):
        out = self.inputs.cues
        if out is not None:
            Path(out).write_text(json.dumps(self.cues, indent=1, ensure_ascii=False), encoding="utf-8")
