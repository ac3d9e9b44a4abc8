"""A held frame (a wait) costs x264 two frames, whatever its length (film/frames/holds.py): the segment
still holds every frame at a constant rate, each decodes to the same picture, and the scene's
packet account still matches its file."""
from __future__ import annotations

import functools
import subprocess
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from onepass.engine.encoding import ENCODER_OPTIONS
from onepass.engine.frames import SegmentEncoder, VideoEncoderSpec
from onepass.film.frames import holds
from onepass.voiceover import media

SPEC = VideoEncoderSpec("mp4", "libx264", "yuv420p", 320, 192, Fraction(60), tuple(ENCODER_OPTIONS.items()))


def picture(seed: int = 5) -> av.VideoFrame:
    """A frame with edges and colour (flat frames are too easy for an encoder)."""
    rng = np.random.default_rng(seed)
    rgb = np.repeat(np.repeat(rng.integers(0, 256, (12, 20, 3), dtype=np.uint8), 16, 0), 16, 1)
    return av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")


def hold(path: Path, frames: int) -> SegmentEncoder:
    encoder = SegmentEncoder(target=path, spec=SPEC, packet_hash=functools.partial(media.packet_hash, annexb=True),
                             hold_copies=holds.hold_copies)      # as a scene process has it (onepass.film.run.render_job)
    encoder.write_frame(picture(), repeat=frames)
    encoder.finish()
    return encoder


def decoded(path: Path) -> tuple[list[np.ndarray], list[int]]:
    with av.open(str(path)) as container:
        frames = list(container.decode(video=0))
    return [f.to_ndarray() for f in frames], [f.pts for f in frames]


def test_a_long_hold_is_every_frame_of_one_picture_at_a_constant_rate(tmp_path):
    path = tmp_path / "hold.mp4"
    # 300 frames: past the wrap of the frame number and picture order count x264 gives a stream
    encoder = hold(path, 300)
    pictures, pts = decoded(path)
    assert len(pictures) == 300
    assert all(np.array_equal(pictures[0], p) for p in pictures)
    assert np.diff(pts).tolist() == [pts[1] - pts[0]] * 299 and pts[0] == 0
    # x264 made two frames; the other 298 are its all-skipped second frame again, a few bytes each
    with av.open(str(path)) as container:
        packets = [p for p in container.demux(video=0) if p.size]
    assert [p.is_keyframe for p in packets].count(True) == 1
    assert max(p.size for p in packets[2:]) < 200
    # the account the runner checks the file against covers the copies too
    assert encoder.hashes == media.packet_hashes(path)
    # and a standard decoder (ffmpeg's command) reads the same count without an error
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", "null", "-"],
                         capture_output=True, text=True, check=True)
    assert out.stderr == ""


def test_a_hold_whose_copy_does_not_check_out_is_encoded_frame_by_frame(tmp_path, monkeypatch):
    monkeypatch.setattr(holds, "hold_copies", lambda extradata, packets: None)
    path = tmp_path / "hold.mp4"
    encoder = hold(path, 40)
    pictures, _ = decoded(path)
    assert len(pictures) == 40 and not encoder._held
    assert encoder.hashes == media.packet_hashes(path)


def test_a_copy_that_decodes_to_another_picture_is_refused():
    """x264's second frame at the stream's own quantizer refines the first (it is not all
    skipped): copies of it would drift, so hold_copies must say no."""
    with av.open("/dev/null", "w", format="mp4") as container:     # never written: encode only
        stream = container.add_stream("libx264", rate=60, options=dict(ENCODER_OPTIONS))
        stream.pix_fmt, stream.width, stream.height = "yuv420p", 320, 192
        first, second = picture(5), picture(6)          # two different pictures
        first.pts, second.pts = 0, 1
        packets = [*stream.encode(first), *stream.encode(second), *stream.encode()]
        assert holds.hold_copies(stream.codec_context.extradata, packets) is None


@given(st.binary(max_size=64))
def test_emulation_prevention_round_trips(rbsp):
    payload = holds.escape(rbsp)
    assert b"\x00\x00\x00" not in payload and b"\x00\x00\x01" not in payload and b"\x00\x00\x02" not in payload
    assert not payload.endswith(b"\x00\x00")
    assert holds.unescape(payload) == rbsp
