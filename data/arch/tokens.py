"""A model's own tokenizer, with the few calls the film makes of GPT-2's module (data/tokenizer.py):
encode, decode, token_texts, readable, vocab_size. Byte-level BPE vocabularies (SmolLM2, Llama 3,
Qwen3) write their bytes with GPT-2's printable stand-ins, so a token that is part of a UTF-8
character is shown by its bytes ('<F0><9F>') exactly as GPT-2's are."""
from __future__ import annotations

from onepass.data import tokenizer as gpt2_tokenizer


class ModelTokenizer:
    def __init__(self, tok, name: str, bos_id: int | None = None):
        self.tok, self.name, self.bos_id = tok, name, bos_id    # tok: a tokenizers.Tokenizer

    def encode(self, text: str) -> list[int]:
        """The ids the model reads: its begin-of-text token first where the model adds one."""
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return ([self.bos_id] if self.bos_id is not None else []) + ids

    def encode_plain(self, text: str) -> list[int]:
        """The ids of `text` alone (no begin-of-text token): a --watch token, a word."""
        return self.tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=False)

    def token_texts(self, ids: list[int]) -> list[str]:
        return [self.decode([i]) for i in ids]

    def token_bytes(self, token_id: int) -> bytes:
        symbol = self.tok.id_to_token(int(token_id))
        if symbol is None:
            return b""
        if any(c not in gpt2_tokenizer._UNICODE_TO_BYTE for c in symbol):      # a special token: its name
            return symbol.encode("utf-8")
        return gpt2_tokenizer.symbol_bytes(symbol)

    def readable(self, token_id: int) -> str:
        """A token's text for screen and captions (its bytes when it is part of a character; an id
        with no token, which a vocabulary padded past its tokens has, as <unused id>)."""
        if self.tok.id_to_token(int(token_id)) is None:
            return f"<unused {int(token_id)}>"
        text = self.decode([token_id])
        return gpt2_tokenizer.visible_bytes(self.token_bytes(token_id)) if "\ufffd" in text else text

    def vocab_size(self) -> int:
        return self.tok.get_vocab_size(with_added_tokens=True)
