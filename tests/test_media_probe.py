"""voiceover/media.py's probe() answers in this process (PyAV) what ffprobe answered in a process of
its own: this checks, on a file of each kind onepass makes or reads, that every question its callers
ask (film/, voiceover/, tests/) gets exactly ffprobe's answer, down to the JSON types, and that a file
ffprobe cannot read raises UnreadableMedia (a MediaError and a ValueError, as the callers catch)."""
from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from onepass.voiceover import media

# every (select, entries, count_packets) a caller asks (grep probe( video_facts( ... stream_seconds()
QUESTIONS = [
    ("v:0", "stream=nb_read_packets,r_frame_rate", True),    # video_facts, video_seconds
    ("v:0", "stream=r_frame_rate", False),                   # frame_rate
    ("v:0", "stream=height", False),                         # video_height
    ("v:0", "stream=width,height", False),                   # film/kit/slides.py, tests
    ("v:0", "stream=duration", False),                       # stream_seconds(path, "v")
    ("a:0", "stream=duration", False),                       # stream_seconds(path, "a")
    ("v:0", "stream=codec_name", False),                     # tests/test_lecture.py
    ("a:0", "stream=codec_name", False),
    ("v:0", "stream=codec_name,width,r_frame_rate", False),  # tests/test_lecture.py, the GIF
    ("v:0", "stream=" + ",".join(media.FIELDS), True),       # every field at once
    ("v:0", "stream=" + ",".join(media.FIELDS), False),
    ("a:0", "stream=" + ",".join(media.FIELDS), False),
]
FAILED = "ffprobe failed"


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *map(str, args)], check=True)


def lavfi_video(seconds: float = 2, rate: str = "15") -> list:
    return ["-f", "lavfi", "-i", f"testsrc2=size=160x90:rate={rate}:d={seconds}"]


def lavfi_tone(seconds: float = 2) -> list:
    return ["-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}:sample_rate=48000"]


def pyav_mp4(path):
    """An MP4 written by PyAV's libx264, as manim writes a scene (engine/frames.py)."""
    import av
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=15, options={"preset": "veryfast"})
        stream.width, stream.height, stream.pix_fmt = 160, 90, "yuv420p"
        for i in range(12):
            picture = np.full((90, 160, 3), i * 20, dtype=np.uint8)
            out.mux(stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")))
        out.mux(stream.encode())


def cut_short(source, path, keep: float):
    data = source.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])


def index_cut(source, path, before: bytes):
    """An MP4 whose index (moov, at the end, as PyAV and manim leave it) stops before box `before`."""
    data = source.read_bytes()
    path.write_bytes(data[:data.index(before, data.index(b"moov"))])


def damaged(source, path):
    """Its middle overwritten with noise (tests/test_reliability.py's damage, here always the same)."""
    data = bytearray(source.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 2048] = np.random.default_rng(7).integers(0, 256, 2048, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """One file of each kind, by name."""
    d = tmp_path_factory.mktemp("media kinds")
    f = {name: d / name for name in (
        "h264.mp4", "h264-aac.mp4", "ntsc.mp4", "pyav.mp4", "clip.mp4", "muxed.mp4", "joined.mp4", "clip.webm",
        "clip.gif", "tone.wav", "tone.m4a", "poster.png", "it's a \"quoted\" name.mp4", "empty.mp4",
        "cut-short.mp4", "no-index.mp4", "no-sample-table.mp4", "no-sample-times.mp4", "damaged.mp4", "notes.txt",
        "missing.mp4")}
    ffmpeg(*lavfi_video(), "-frames:v", 10, "-c:v", "libx264", "-pix_fmt", "yuv420p", f["h264.mp4"])
    # tests/helpers.py's stand_in_clip with a tone; left as ffmpeg writes it (its index at the end)
    ffmpeg(*lavfi_video(), *lavfi_tone(), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
           f["h264-aac.mp4"])
    ffmpeg(*lavfi_video(1, "30000/1001"), "-c:v", "libx264", "-pix_fmt", "yuv420p", f["ntsc.mp4"])
    pyav_mp4(f["pyav.mp4"])
    # film/kit/clips.py's cut: a span of frames and its samples, encoded as ENCODE["mp4"] says
    ffmpeg("-i", f["h264-aac.mp4"], "-filter_complex",
           "[0:v]trim=start_frame=3:end_frame=20,setpts=PTS-STARTPTS[v];"
           "[0:a]atrim=start_sample=9600:end_sample=64000,asetpts=PTS-STARTPTS[a]",
           "-map", "[v]", "-c:v", "libx264", "-preset", "medium", "-crf", "18", "-pix_fmt", "yuv420p",
           "-map", "[a]", "-c:a", "aac", "-b:a", "160k", "-ar", "48000", "-movflags", "+faststart", f["clip.mp4"])
    ffmpeg("-i", f["clip.mp4"], "-filter_complex",
           "[0:v]fps=15,scale='min(480,iw)':-2:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];"
           "[b][p]paletteuse=dither=bayer:bayer_scale=4", "-loop", "0", f["clip.gif"])
    ffmpeg("-i", f["clip.mp4"], "-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "32", "-deadline", "good",
           "-cpu-used", "4", "-row-mt", "1", "-pix_fmt", "yuv420p", "-c:a", "libopus", "-b:a", "96k", "-ar", "48000",
           f["clip.webm"])
    ffmpeg("-i", f["clip.mp4"], "-frames:v", 1, f["poster.png"])
    ffmpeg(*lavfi_tone(1.5), "-ac", "1", f["tone.wav"])
    ffmpeg("-i", f["tone.wav"], "-c:a", "aac", f["tone.m4a"])
    # voiceover/mixdown.py's join and mux: parts' pictures concatenated by stream copy, narration added
    listing = media.write_ffconcat(d / "parts.txt", [f["h264.mp4"], f["pyav.mp4"]], [10 / 15, 12 / 15])
    ffmpeg("-f", "concat", "-safe", "0", "-i", listing, "-map", "0:v:0", "-c", "copy", d / "picture.mp4")
    ffmpeg("-i", d / "picture.mp4", "-i", f["tone.wav"], "-map", "0:v:0", "-map", "1:a:0", "-c:v", "copy", "-c:a",
           "aac", "-aac_coder", "fast", "-b:a", "160k", "-ar", "48000", "-ac", "1", "-movflags", "+faststart",
           f["muxed.mp4"])
    # film/run/join.py's join_film: chapters end to end, the picture copied, chapter markers
    listing = media.write_ffconcat(d / "chapters.txt", [f["muxed.mp4"], f["clip.mp4"]], [22 / 15, 17 / 15])
    (d / "meta.txt").write_text(";FFMETADATA1\ntitle=film\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1466\n"
                                "title=one\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1466\nEND=2600\ntitle=two\n")
    ffmpeg("-f", "concat", "-safe", "0", "-i", listing, "-i", d / "meta.txt", "-map", "0:v:0", "-c:v", "copy",
           "-map", "0:a:0", "-c:a", "aac", "-aac_coder", "fast", "-b:a", "160k", "-ar", "48000",
           "-map_metadata", "1", "-map_chapters", "1", "-movflags", "+faststart", f["joined.mp4"])
    shutil.copy(f["h264-aac.mp4"], f["it's a \"quoted\" name.mp4"])
    f["empty.mp4"].write_bytes(b"")
    cut_short(f["clip.mp4"], f["cut-short.mp4"], 0.6)      # index at the front: the packets stop short
    cut_short(f["h264-aac.mp4"], f["no-index.mp4"], 0.6)   # index at the end: lost
    index_cut(f["pyav.mp4"], f["no-sample-table.mp4"], b"stbl")     # a video stream of no known codec
    index_cut(f["pyav.mp4"], f["no-sample-times.mp4"], b"stts")     # a codec, no packets
    damaged(f["h264-aac.mp4"], f["damaged.mp4"])
    f["notes.txt"].write_text("not a video\n")
    return f


def ffprobe_says(path) -> dict:
    """{"v:0": fields, "a:0": fields} as `ffprobe -count_packets -show_entries stream=FIELDS -of json`
    prints them for the first video and audio stream (None: no such stream), or FAILED for both."""
    proc = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-show_entries",
                           "stream=codec_type," + ",".join(media.FIELDS), "-of", "json", str(path)],
                          capture_output=True, text=True)
    if proc.returncode:
        return {"v:0": FAILED, "a:0": FAILED}
    streams = json.loads(proc.stdout).get("streams") or []
    kinds = [s.pop("codec_type", None) for s in streams]
    first = {kind: next((s for s, k in zip(streams, kinds) if k == kind), None) for kind in ("video", "audio")}
    return {"v:0": first["video"], "a:0": first["audio"]}


def ffprobe_answer(whole, entries: str, count_packets: bool):
    """ffprobe's answer to one question, from all its fields of the stream: it prints each field or not
    whichever others are asked with it, and nb_read_packets only with -count_packets (one ffprobe run
    per file, not one per question: checked against a run per question when this test was written)."""
    if whole in (None, FAILED):
        return whole
    asked = entries.split("=")[1].split(",")
    return {k: v for k, v in whole.items() if k in asked and (count_packets or k != "nb_read_packets")}


@pytest.fixture(scope="module")
def said(files):
    """ffprobe_says of each file, by name."""
    return {name: ffprobe_says(path) for name, path in files.items()}


def probe_says(path, select: str, entries: str, count_packets: bool):
    try:
        return media.probe(path, select, entries, count_packets)
    except media.UnreadableMedia as exc:
        assert isinstance(exc, ValueError) and str(path) in str(exc)
        return FAILED


def test_every_question_gets_ffprobes_answer_for_every_kind_of_file(files, said):
    differ = []
    for name, path in files.items():
        for select, entries, count in QUESTIONS:
            want = ffprobe_answer(said[name][select], entries, count)
            got = probe_says(path, select, entries, count)
            if got != want or got not in (None, FAILED) and list(got) != list(want):       # the same order too
                differ.append(f"{name} {select} {entries} {'-count_packets' if count else ''}: "
                              f"ffprobe {want}, probe {got}")
    assert not differ, "\n".join(differ)


def test_the_kinds_cover_what_they_claim(said):
    """The check means something only if the files are what they are named: streams and failures."""
    codecs = {name: tuple(s if s in (None, FAILED) else s.get("codec_name") for s in (v["v:0"], v["a:0"]))
              for name, v in said.items()}
    assert codecs["clip.webm"] == ("vp9", "opus") and codecs["clip.gif"] == ("gif", None)
    assert codecs["tone.wav"] == (None, "pcm_s16le") and codecs["tone.m4a"] == (None, "aac")
    assert codecs["joined.mp4"] == codecs["clip.mp4"] == codecs["damaged.mp4"] == ("h264", "aac")
    assert codecs["poster.png"] == ("png", None)
    assert all(codecs[n] == (FAILED, FAILED) for n in ("empty.mp4", "no-index.mp4", "notes.txt", "missing.mp4"))
    assert "duration" not in said["clip.webm"]["v:0"] and said["ntsc.mp4"]["v:0"]["r_frame_rate"] == "30000/1001"
    assert 0 < int(said["cut-short.mp4"]["v:0"]["nb_read_packets"]) < int(said["clip.mp4"]["v:0"]["nb_read_packets"])
    assert "codec_name" not in said["no-sample-table.mp4"]["v:0"] and said["no-sample-table.mp4"]["v:0"]["width"] == 0
    assert codecs["no-sample-times.mp4"] == ("h264", None) and "nb_read_packets" not in said["no-sample-times.mp4"]["v:0"]


def test_the_helpers_read_the_answers_as_before(files):
    assert media.video_facts(files["h264.mp4"]) == (10, 15.0)
    assert media.video_seconds(files["ntsc.mp4"]) == pytest.approx(1.0, abs=1 / 30)
    assert media.frame_rate(files["clip.gif"]) == 15.0 and media.video_height(files["clip.webm"]) == 90
    assert media.stream_seconds(files["clip.webm"], "a") is None and media.stream_seconds(files["tone.m4a"], "v") is None
    assert media.stream_seconds(files["h264-aac.mp4"], "a") == pytest.approx(2.0, abs=0.05)
    with pytest.raises(ValueError, match="no video stream"):
        media.video_facts(files["tone.wav"])
    with pytest.raises(media.MediaError, match="cannot be read"):
        media.video_facts(files["missing.mp4"])
    with pytest.raises(KeyError):                   # no packets: as before, film/run/ reports it unreadable
        media.video_facts(files["no-sample-times.mp4"])
    with pytest.raises(NotImplementedError):        # WAV's packets differ by libavformat version
        media.probe(files["tone.wav"], "a:0", "stream=nb_read_packets", count_packets=True)
