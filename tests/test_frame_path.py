"""The scene processes' frame path (film/render_job.py: FilmRenderer, FilmCamera, FilmFileWriter,
SegmentEncoder) is only faster: the same scene gives the same decoded frames through it as through
manim's own renderer and camera, and the same frames on every render."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from manim import DOWN, UP, Create, FadeIn, FadeOut, Scene, Transform, tempconfig
from manim.renderer.cairo_renderer import CairoRenderer

from film.render_job import ENCODER_OPTIONS, FilmRenderer, FrameTimes
from scenes import style as S
from scenes.meter import CountTo, FlopsMeter
from scenes.widgets import AttentionArcs, NumberGrid


class Sampler(Scene):
    """A little of everything the film does: fades, a transform, the meter counting (drawn last),
    thin strokes, and holds (static waits) between them."""

    def construct(self):
        rng = np.random.default_rng(3)
        meter = FlopsMeter(0, "", widest=10 ** 9, title="Σ FLOPs").to_corner(UP + S.END, buff=S.MARGIN)
        self.add(meter)
        grid = NumberGrid(rng.normal(0, 1.5, (3, 4)), vmax=3.0).shift(DOWN * 0.5)
        self.play(FadeIn(grid), run_time=0.4)
        self.wait(0.3)
        after = NumberGrid(rng.normal(0, 1.5, (3, 4)), vmax=3.0).shift(DOWN * 0.5)
        self.play(*[Transform(grid.cells[k], after.cells[k]) for k in grid.cells], run_time=0.4)
        arcs = AttentionArcs(np.tril(rng.random((5, 5))) / 3, layout="row", width=6.0).shift(UP * 1.6)
        self.play(Create(arcs.lines), FadeIn(arcs.marks), run_time=0.4)
        self.add(meter)
        self.play(CountTo(meter.counter, 123_456_789), run_time=0.5)
        self.wait(0.25)
        self.play(FadeOut(grid), run_time=0.3)


def render(make_renderer, media: Path) -> Path:
    with tempconfig({"quality": "low_quality", "media_dir": str(media), "disable_caching": True,
                     "progress_bar": "none", "verbosity": "WARNING", "write_to_movie": True,
                     "output_file": "sampler", "background_color": S.BACKGROUND,
                     "video_encoder_options": ENCODER_OPTIONS}):
        scene = Sampler(renderer=make_renderer())     # made here: its camera takes the quality
        scene.render()
        return Path(scene.renderer.file_writer.movie_file_path)


def framemd5(path: Path) -> list[str]:
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:v:0", "-f", "framemd5", "-"],
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line and not line.startswith("#")]


@pytest.mark.render
def test_the_film_frame_path_draws_what_manim_draws_and_the_same_every_time(tmp_path):
    times = FrameTimes()
    ours = framemd5(render(lambda: FilmRenderer(times), tmp_path / "ours"))
    again = framemd5(render(FilmRenderer, tmp_path / "again"))
    stock = framemd5(render(CairoRenderer, tmp_path / "stock"))
    assert len(ours) == len(stock) > 0
    assert ours == stock, "the film's frame path changed a frame manim would have drawn"
    assert again == ours, "two renders of one scene gave different frames"
    # the holds were converted once and encoded as many times as they last
    assert times.frames == len(ours) and times.converted < times.frames
