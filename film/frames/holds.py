"""A held frame (a wait: one picture for N frames) encoded as one picture and N-1 copies of one
'nothing changed' frame, instead of N frames through x264.

x264 spends about as long on a frame identical to the last as on a new one (13 ms at 1080p on a
2-core machine: its lookahead, analysis and filtering run whatever the content), and a third of
a chapter's frames are holds. So a hold segment sends x264 its picture twice and flushes: out
come an IDR frame and a P frame whose macroblocks are all skipped (the decoder copies its
reference). That P frame decodes to its reference whatever frame it follows, so the hold's other
frames are the same slice again with only its frame number and picture order count rewritten,
the two fixed-width fields that change from frame to frame; the stream stays constant-rate and
every frame is an ordinary coded frame.

The copy is checked before it is used: the IDR, x264's P frame and two rewritten copies are
decoded and must give the same picture (`hold_copies` returns None otherwise, and the caller
encodes the hold the ordinary way).

Numbers refer to ITU-T H.264 (sections 7.3.2.1 SPS, 7.3.3 slice header, 7.4.1 emulation
prevention).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from onepass.voiceover.media import nal_units

NAL_SLICE, NAL_IDR, NAL_SPS = 1, 5, 7
# profiles whose SPS carries chroma format and bit depth fields (7.3.2.1.1)
HIGH_PROFILES = {100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135}


class Unsupported(ValueError):
    """A stream this module does not rewrite (the caller encodes the hold the ordinary way)."""


class BitReader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def u(self, n: int) -> int:
        value = 0
        for _ in range(n):
            byte = self.data[self.pos >> 3]
            value = (value << 1) | ((byte >> (7 - (self.pos & 7))) & 1)
            self.pos += 1
        return value

    def ue(self) -> int:                 # Exp-Golomb, 9.1
        zeros = 0
        while self.u(1) == 0:
            zeros += 1
            if zeros > 31:
                raise Unsupported("bad Exp-Golomb code")
        return (1 << zeros) - 1 + self.u(zeros)


def unescape(nal: bytes) -> bytes:
    """NAL payload -> RBSP: every 00 00 03 loses its 03 (7.4.1)."""
    return re.sub(rb"\x00\x00\x03", b"\x00\x00", nal)


def escape(rbsp: bytes) -> bytes:
    """RBSP -> NAL payload: 00 00 followed by 00..03 gets an 03 between, and so does 00 00 at the
    very end (7.4.1)."""
    return re.sub(rb"\x00\x00(?=[\x00-\x03]|\Z)", b"\x00\x00\x03", rbsp)


@dataclass(frozen=True)
class Sequence:
    """What a slice header's layout depends on, from the SPS."""
    log2_max_frame_num: int
    poc_type: int
    log2_max_poc_lsb: int
    colour_planes: bool

    @classmethod
    def parse(cls, sps: bytes) -> "Sequence":
        r = BitReader(unescape(sps[1:]))
        profile = r.u(8)
        r.u(16)                              # constraint flags, level
        r.ue()                               # seq_parameter_set_id
        colour_planes = False
        if profile in HIGH_PROFILES:
            if r.ue() == 3:                  # chroma_format_idc
                colour_planes = bool(r.u(1))
            r.ue(), r.ue(), r.u(1)           # bit depths, qpprime_y_zero_transform_bypass
            if r.u(1):
                raise Unsupported("scaling matrices in the SPS")
        log2_max_frame_num = r.ue() + 4
        poc_type = r.ue()
        if poc_type == 0:
            log2_max_poc_lsb = r.ue() + 4
        elif poc_type == 2:
            log2_max_poc_lsb = 0
        else:
            raise Unsupported("picture order count type 1")
        r.ue(), r.u(1)                       # max_num_ref_frames, gaps_in_frame_num_allowed
        r.ue(), r.ue()                       # picture size in macroblocks
        if not r.u(1):
            raise Unsupported("interlaced (field) coding")
        return cls(log2_max_frame_num, poc_type, log2_max_poc_lsb, colour_planes)


@dataclass(frozen=True)
class SliceFields:
    """Where a slice's frame_num and pic_order_cnt_lsb sit (bit offsets into its RBSP, after the
    one-byte NAL header), and their values."""
    frame_num_at: int
    frame_num: int
    poc_at: int | None
    poc: int

    @classmethod
    def parse(cls, rbsp: bytes, seq: Sequence, idr: bool) -> "SliceFields":
        r = BitReader(rbsp)
        r.pos = 8                            # the NAL header byte
        r.ue(), r.ue(), r.ue()               # first_mb_in_slice, slice_type, pic_parameter_set_id
        if seq.colour_planes:
            r.u(2)
        at = r.pos
        frame_num = r.u(seq.log2_max_frame_num)
        if idr:
            r.ue()                           # idr_pic_id
        if seq.poc_type != 0:
            return cls(at, frame_num, None, 0)
        poc_at = r.pos
        return cls(at, frame_num, poc_at, r.u(seq.log2_max_poc_lsb))


def set_bits(data: bytearray, at: int, width: int, value: int) -> None:
    for i in range(width):
        bit = (value >> (width - 1 - i)) & 1
        byte, shift = (at + i) >> 3, 7 - ((at + i) & 7)
        data[byte] = (data[byte] & ~(1 << shift)) | (bit << shift)


class SkipFrames:
    """Copies of x264's all-skip P slice as the k-th frame of its stream (the IDR is frame 0)."""

    def __init__(self, extradata: bytes, idr_packet: bytes, p_packet: bytes):
        sps = [n for n in nal_units(extradata, annexb=True) + nal_units(idr_packet, annexb=True)
               if n and n[0] & 0x1F == NAL_SPS]
        if not sps:
            raise Unsupported("no sequence parameter set")
        self.seq = Sequence.parse(sps[0])
        second = nal_units(p_packet, annexb=True)
        if len(second) != 1 or not second[0] or second[0][0] & 0x1F != NAL_SLICE:
            raise Unsupported("the second frame is not one non-IDR slice")
        if second[0][0] & 0x60 == 0:
            raise Unsupported("the second frame is not a reference frame")
        idr = [n for n in nal_units(idr_packet, annexb=True) if n and n[0] & 0x1F == NAL_IDR]
        if len(idr) != 1:
            raise Unsupported("the first frame is not one IDR slice")
        self.rbsp = unescape(second[0])
        self.fields = SliceFields.parse(self.rbsp, self.seq, idr=False)
        first = SliceFields.parse(unescape(idr[0]), self.seq, idr=True)
        if self.fields.frame_num != 1 or first.frame_num != 0:
            raise Unsupported("unexpected frame numbers")
        self.poc_step = self.fields.poc - first.poc     # 2 per frame in x264's streams

    def frame(self, k: int) -> bytes:
        """The Annex B packet for frame k (k >= 1) of the hold."""
        data = bytearray(self.rbsp)
        set_bits(data, self.fields.frame_num_at, self.seq.log2_max_frame_num,
                 k % (1 << self.seq.log2_max_frame_num))
        if self.fields.poc_at is not None:
            set_bits(data, self.fields.poc_at, self.seq.log2_max_poc_lsb,
                     (k * self.poc_step) % (1 << self.seq.log2_max_poc_lsb))
        return b"\x00\x00\x00\x01" + data[:1] + escape(bytes(data[1:]))


def hold_copies(extradata: bytes, packets) -> SkipFrames | None:
    """The copier for a hold whose first two frames x264 made (`packets`: the IDR and the P frame,
    in decode order, PyAV packets), or None where the copy cannot be used: the stream is not one
    this module rewrites, or the P frame and two copies of it do not decode to the IDR's picture."""
    import av          # deferred: PyAV loads libav*; only scene processes encode
    import numpy as np
    if len(packets) != 2 or not packets[0].is_keyframe:
        return None
    try:
        copies = SkipFrames(bytes(extradata or b""), bytes(packets[0]), bytes(packets[1]))
    except (Unsupported, IndexError):
        return None
    decoder = av.CodecContext.create("h264", "r")
    decoder.extradata = extradata
    decoder.thread_count = 1
    pictures = []
    try:
        for data in (bytes(packets[0]), bytes(packets[1]), copies.frame(2), copies.frame(3)):
            pictures += [f.to_ndarray() for f in decoder.decode(av.Packet(data))]
        pictures += [f.to_ndarray() for f in decoder.decode(None)]
    except av.error.FFmpegError:
        return None
    if len(pictures) != 4 or not all(np.array_equal(pictures[0], p) for p in pictures[1:]):
        return None
    return copies
