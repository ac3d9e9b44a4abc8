"""Facts about media files (read in this process by libavformat, through PyAV) and ffmpeg's
concat listings: one copy of each, used by the narration mixdown and by the film build (film/).
Each question is answered once per process of a file that has not changed since.

    frames, fps = video_facts(path)          # exact: packets counted, nothing decoded
    seconds = video_seconds(path)            # frames / fps
    fields = probe(path, "v:0", "stream=width,height")   # ffprobe's fields, as ffprobe prints them
    write_ffconcat(listing, parts, durations)
    run_ffmpeg([...])                        # raises MediaError on any error ffmpeg reports
    decode_problems(path)                    # None, or why its picture does not decode
    hashes = packet_hashes(path)             # sha256 of each video packet: read, never decoded
    packets_digest(hashes)                   # one hex digest of a run of packets

Why PyAV and not ffprobe: an ffprobe process costs about 70 ms of CPU and a process start per
question, and a build, its lecture kit and the test suite ask hundreds; libavformat in this process
(PyAV, which manim already needs) answers the same question from the same structures ffprobe prints
(fftools/ffprobe.c, show_stream) in about 1 ms for a small clip (40 ms to count the packets of an
8,000-frame chapter). tests/test_media_probe.py checks every answer against ffprobe's on each kind
of file onepass makes or reads.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
from fractions import Fraction
from pathlib import Path

from onepass.data.errors import OnepassError


class MediaError(OnepassError, RuntimeError):
    """ffmpeg failed, or reported an error while still exiting 0 (its concat demuxer logs
    "Invalid data found when processing input" for a damaged part and carries on)."""


class UnreadableMedia(MediaError, ValueError):
    """A file libavformat cannot open as media (missing, empty, not media, cut short before its
    index), where ffprobe exited non-zero. A ValueError too: the callers that check a render
    (film/run/runner.py, film/run/join.py) catch ValueError for a video they cannot read."""


# The stream fields probe() answers, in the order ffprobe prints them, each read as ffprobe reads it:
#   codec_name        str, the codec's own name (avcodec_get_name: "h264", "vp9"), not its decoder's
#   width, height     int, video streams only
#   r_frame_rate      str "num/den" (AVStream.r_frame_rate, "15/1"); "0/0" where it is unset (audio)
#   duration          str "%f" seconds (AVStream.duration x time_base, "2.000000"); left out where the
#                     container states none (WebM's streams)
#   nb_read_packets   str, the packets av_read_frame returns for the stream up to the end or the first
#                     read error (ffprobe stops there too, exit status 0); left out when there are none;
#                     only with count_packets, and of video streams only (below)
# Debian's ffprobe is FFmpeg 5.1; PyAV's wheel brings its own libavformat (62, FFmpeg 8). Their demuxers
# differ on a few files, none that a caller asks about:
#   PCM audio's packets (1.5 s of WAV: 36 to 5.1, 18 to 62): probe() counts video packets only
#   a GIF cut short: 62 returns its partial last frame as a packet, 5.1 does not (no GIF's frames are counted)
#   an MP4 whose index is cut inside its sample table, past the sample descriptions: no packets to either,
#   and a different r_frame_rate or duration guessed from what is left
FIELDS = ("codec_name", "width", "height", "r_frame_rate", "duration", "nb_read_packets")
KINDS = {"v": "video", "a": "audio"}

# the answers in this process, by (file identity, question): a build and its lecture kit ask the
# same question of the same file many times (a deck probes its chapter's clip once per deck, a test
# checks what the kit just checked), and counting a chapter's packets reads the whole file
_answers: dict[tuple, dict | None] = {}
_ANSWERS_KEPT = 4096


def _identity(path: Path) -> tuple | None:
    """What tells one version of a file from another: a file replaced gets a new inode, one
    rewritten in place a new mtime (and most often size). None when it cannot be stat'ed."""
    try:
        resolved = Path(path).resolve()
        st = resolved.stat()
    except OSError:
        return None
    return str(resolved), st.st_ino, st.st_size, st.st_mtime_ns


def probe(path: Path, select: str, entries: str, count_packets: bool = False) -> dict | None:
    """ffprobe's fields `entries` ("stream=a,b", of FIELDS) of the first stream matching `select`
    ("v:0", "a:0"), as the dict `ffprobe -of json` gives (its field names, strings and ints, as
    FIELDS says); None when the file has no such stream. Raises UnreadableMedia where ffprobe
    failed. Asked once per process of an unchanged file: one replaced or rewritten is read again."""
    kind, index = _selector(select)
    names = _field_names(entries)
    if count_packets and kind != "video" and "nb_read_packets" in names:
        raise NotImplementedError("probe counts the packets of video streams only (FIELDS says why)")
    before = _identity(path)
    key = (before, select, entries, count_packets)
    if before and key in _answers:
        answer = _answers[key]
    else:
        answer = read_stream_fields(path, kind, index, names, count_packets)
        if before and _identity(path) == before:        # not changed while it was read
            if len(_answers) >= _ANSWERS_KEPT:
                _answers.clear()
            _answers[key] = answer
    return dict(answer) if answer is not None else None      # a copy: a caller may change its dict


def _selector(select: str) -> tuple[str, int]:
    """ffprobe's stream specifier "v:0" / "a:1" / "v" -> ("video", 0)."""
    letter, _, index = select.partition(":")
    if letter not in KINDS or not (index or "0").isdigit():
        raise NotImplementedError(f"probe answers stream specifiers v:N and a:N, not {select!r}")
    return KINDS[letter], int(index or 0)


def _field_names(entries: str) -> set[str]:
    section, _, names = entries.partition("=")
    asked = set(filter(None, names.split(",")))
    if section != "stream" or not asked <= set(FIELDS):
        raise NotImplementedError(f"probe answers stream={','.join(FIELDS)} (any of them), not {entries!r}")
    return asked


def read_stream_fields(path: Path, kind: str, index: int, names: set[str], count_packets: bool) -> dict | None:
    """The fields `names` of the index-th `kind` ("video", "audio") stream of `path`, read afresh
    (probe() keeps the answers); None when there is no such stream."""
    import av  # deferred: PyAV loads libav* (about 50 ms) and many importers never ask
    try:
        # metadata is never read here: a tag that is not UTF-8 must not fail the open
        with av.open(str(path), metadata_errors="ignore") as container:
            streams = getattr(container.streams, kind)
            if index >= len(streams):
                return None
            stream = streams[index]
            values = {}
            codec = stream.codec_context      # None: a codec PyAV has no decoder for
            if codec is not None:             # ffprobe leaves out the name of a codec it does not know
                values["codec_name"] = codec.codec.canonical_name
            if stream.type == "video":
                # PyAV shows width and height through a decoder only. Without one: 0, as ffprobe
                # prints for a stream of unknown codec (an MP4 index cut before its sample descriptions)
                values["width"], values["height"] = (codec.width, codec.height) if codec else (0, 0)
            rate = stream.base_rate if stream.type == "video" else None
            values["r_frame_rate"] = f"{rate.numerator}/{rate.denominator}" if rate else "0/0"
            base = stream.time_base
            if stream.duration is not None and base:
                # ffprobe's own arithmetic: ts * av_q2d(time_base), printed with %f
                values["duration"] = f"{stream.duration * (base.numerator / base.denominator):f}"
            if count_packets and "nb_read_packets" in names:
                packets = _count_packets(container, stream)
                if packets:                   # ffprobe leaves out a count of 0
                    values["nb_read_packets"] = str(packets)
    except av.error.FFmpegError as exc:       # its strerror: what is wrong, without the path again
        raise UnreadableMedia(f"{path} cannot be read: {exc.strerror or exc}") from None
    return {name: values[name] for name in FIELDS if name in names and name in values}


def _count_packets(container, stream) -> int:
    """The packets of `stream` that demuxing the file yields, as ffprobe's -count_packets counts."""
    import av
    count = 0
    try:
        for _ in container.demux(stream):
            count += 1
    except av.error.FFmpegError:       # a read error ends ffprobe's count where it is, not in failure
        return count
    return count - 1                   # demux ends with one empty flushing packet, read from no file


def _video(path: Path, entries: str, count_packets: bool = False) -> dict:
    stream = probe(path, "v:0", entries, count_packets)
    if stream is None:
        raise ValueError(f"{path} has no video stream")
    return stream


def _frames(path: Path) -> tuple[int, Fraction]:
    stream = _video(path, "stream=nb_read_packets,r_frame_rate", count_packets=True)
    return int(stream["nb_read_packets"]), Fraction(stream["r_frame_rate"])


def video_facts(path: Path) -> tuple[int, float]:
    """(frames, fps) of the first video stream, counted from its packets (exact, no decode)."""
    frames, rate = _frames(path)
    return frames, float(rate)


def video_seconds(path: Path) -> float:
    """Exact length of the video stream: frames / frame rate."""
    frames, rate = _frames(path)
    return float(frames / rate)


def frame_rate(path: Path) -> float:
    return float(Fraction(_video(path, "stream=r_frame_rate")["r_frame_rate"]))


def video_height(path: Path) -> int:
    return int(_video(path, "stream=height")["height"])


def stream_seconds(path: Path, kind: str = "v") -> float | None:
    """Duration of the first video ('v') or audio ('a') stream as ffprobe reports it (None: no
    such stream, or no duration stated)."""
    stream = probe(path, f"{kind}:0", "stream=duration")
    value = (stream or {}).get("duration")
    return float(value) if value not in (None, "N/A") else None


def ffconcat_quote(path: Path | str) -> str:
    """A path as one quoted token of ffmpeg's concat syntax: inside single quotes nothing is
    special except the quote itself, which closes the string, is escaped, and reopens it."""
    return "'" + str(path).replace("'", "'\\''") + "'"


def write_ffconcat(listing: Path, parts: list[Path], durations: list[float]) -> Path:
    """An ffconcat listing of `parts`, each stated exactly `duration` seconds long (so a join
    neither gaps nor doubles a frame); paths are absolute (use with `-safe 0`)."""
    Path(listing).write_text("ffconcat version 1.0\n" + "".join(
        f"file {ffconcat_quote(Path(p).resolve())}\nduration {d:.6f}\n" for p, d in zip(parts, durations)),
        encoding="utf-8")
    return Path(listing)


def run_ffmpeg(args: list, cwd: Path | None = None) -> None:
    """Run `ffmpeg -v error -nostdin -y ARGS`; raises MediaError when it exits non-zero or
    logs anything at error level (its exit status alone misses damaged inputs)."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=cwd)
    problems = [re.sub(r"^\[[\w.-]+ @ 0x[0-9a-f]+\] ", "", line) for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 0 or problems:
        shown = "; ".join(dict.fromkeys(problems))[:400] or f"exit status {proc.returncode}"
        raise MediaError(f"ffmpeg {' '.join(cmd[5:])[:200]}: {shown}")


def decode_problems(path: Path) -> str | None:
    """None when every video frame of `path` decodes without an error; else what ffmpeg said."""
    try:
        run_ffmpeg(["-i", path, "-map", "0:v:0", "-f", "null", "-"])
    except MediaError as exc:
        return str(exc).split(": ", 1)[-1]
    return None


START_CODE = b"\x00\x00\x01"
PARAMETER_SETS = (7, 8)      # H.264 NAL unit types: sequence and picture parameter sets


def nal_units(data: bytes, annexb: bool = False) -> list[bytes]:
    """The NAL units of one H.264 packet, framed with start codes (`annexb`: x264's output) or
    with 4-byte lengths (as the MP4 muxer stores them; the two cannot be told apart from the
    bytes, a length of 256-511 starts 00 00 01). 00 00 01 never occurs inside a NAL unit (the
    encoder escapes it), so splitting on it is exact; the zeros of a 4-byte start code end the
    unit before it."""
    if annexb:
        return [nal.rstrip(b"\x00") for nal in data.split(START_CODE)[1:]]
    units, at = [], 0
    while at + 4 <= len(data):
        size = int.from_bytes(data[at:at + 4], "big")
        units.append(data[at + 4:at + 4 + size])
        at += 4 + size
    if at != len(data):
        units.append(data[at:])          # a damaged length: kept, so the hash differs
    return units


def packet_hash(data: bytes, annexb: bool = False) -> bytes:
    """The hash of one encoded H.264 packet: its NAL units, less the parameter sets (the same for
    every frame of a render; the MP4 muxer repeats them in-band where manim joins its segments).
    Equal for x264's packet (`annexb`) and the packet the MP4 holds."""
    h = hashlib.sha256()
    for nal in nal_units(data, annexb):
        if not nal or nal[0] & 0x1F not in PARAMETER_SETS:
            h.update(len(nal).to_bytes(4, "big") + nal)
    return h.digest()


def packet_hashes(path: Path) -> list[bytes]:
    """packet_hash of every packet of the first video stream, in the file's order. Demuxing only:
    a 1080p60 chapter (8,000 frames) takes a tenth of a second, where decoding it takes 30 s of CPU.
    Raises MediaError when the file cannot be read as a video."""
    import av  # deferred: PyAV loads libav* (a few hundred ms) and most callers never need it
    hashes = []
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise MediaError(f"{path} has no video stream")
            for packet in container.demux(container.streams.video[0]):
                if packet.size:                 # demux ends with an empty flushing packet
                    hashes.append(packet_hash(bytes(packet)))
    except av.error.FFmpegError as exc:
        raise MediaError(f"{path} cannot be read: {exc}") from None
    return hashes


def packets_digest(hashes) -> str:
    """One hex digest of a run of packet hashes: equal for two videos exactly when they hold the
    same packets in the same order (a stream-copied join equals its parts', run after run)."""
    return hashlib.sha256(b"".join(hashes)).hexdigest()
