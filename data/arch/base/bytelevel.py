"""The byte-level BPE alphabet GPT-2 introduced and SmolLM2, Llama 3 and Qwen3 keep: each of the 256
bytes written as a printable character (space -> 'Ġ'), so a vocabulary file is text."""
from __future__ import annotations

from dataclasses import dataclass


def _bytes_to_unicode() -> dict[int, str]:
    """The printable stand-ins for the 256 bytes (space -> 'Ġ')."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    mapping, extra = {}, 0
    for b in range(256):
        if b in keep:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


_BYTE_TO_UNICODE = _bytes_to_unicode()
_UNICODE_TO_BYTE = {c: b for b, c in _BYTE_TO_UNICODE.items()}


def symbol_bytes(symbol: str) -> bytes:
    """The raw bytes behind a byte-level symbol of vocab.bpe / encoder.json ('Ġc' -> b' c')."""
    return bytes(_UNICODE_TO_BYTE[c] for c in symbol)


def visible_bytes(raw: bytes) -> str:
    """Bytes as text: whole UTF-8 characters as themselves, stray bytes (part of a character) as <D8>."""
    out, i = [], 0
    while i < len(raw):
        for n in (1, 2, 3, 4):
            try:
                out.append(raw[i:i + n].decode("utf-8"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append(f"<{raw[i]:02X}>")
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class VocabFacts:
    """How the vocabulary is made, counted from the files themselves."""
    byte_tokens: int
    merges: int
    special: int

    @property
    def total(self) -> int:
        return self.byte_tokens + self.merges + self.special


def bpe_replay(word: str, ranks: dict[tuple[str, str], int]) -> list[list[str]]:
    """Merge steps that turn one pre-token (e.g. " sat") into its tokens under a byte-level BPE's merge
    `ranks`: from its bytes' symbols, the lowest-ranked adjacent pair merged each step, as GPT-2's BPE does."""
    symbols = [_BYTE_TO_UNICODE[b] for b in word.encode("utf-8")]
    steps = [list(symbols)]
    while len(symbols) > 1:
        candidates = [(ranks[(a, b)], i) for i, (a, b) in enumerate(zip(symbols, symbols[1:])) if (a, b) in ranks]
        if not candidates:
            break
        best = min(r for r, _ in candidates)
        pair = next((symbols[j], symbols[j + 1]) for r, j in candidates if r == best)
        merged, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
                merged.append(symbols[i] + symbols[i + 1])
                i += 2
            else:
                merged.append(symbols[i])
                i += 1
        symbols = merged
        steps.append(list(symbols))
    return steps
