"""A model's own tokenizer, with the few calls the film makes of GPT-2's module (data/tokenizer.py):
encode, decode, token_texts, readable, vocab_size. Byte-level BPE vocabularies (SmolLM2, Llama 3,
Qwen3) write their bytes with GPT-2's printable stand-ins, so a token that is part of a UTF-8
character is shown by its bytes ('<F0><9F>') exactly as GPT-2's are."""
from __future__ import annotations

from onepass.data.arch.base import bytelevel as gpt2_tokenizer


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

    # -- the merge replay (chapter 00), from the model's own merges --------------------------------
    # A byte-level BPE's tokenizers.Tokenizer JSON holds its vocabulary and its merges in the order
    # they were learned; these answer the same calls as GPT-2's module (data/tokenizer.py), so chapter
    # 00's facts replay the model's own merges (data/facts/ch00.py).

    @property
    def _model(self) -> dict:
        if not hasattr(self, "_model_json"):
            import json
            self._model_json = json.loads(self.tok.to_str())["model"]
        return self._model_json

    def merge_ranks(self) -> dict[tuple[str, str], int]:
        """(left, right) -> rank in the model's merge list; lower ranks merge first."""
        if not hasattr(self, "_ranks"):
            pairs = (tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in self._model["merges"])
            self._ranks = {}
            for rank, pair in enumerate(pairs):
                self._ranks.setdefault(pair, rank)
        return self._ranks

    def byte_vocab(self) -> dict[str, int]:
        """The BPE vocabulary: byte-level symbol -> id (special tokens not included)."""
        return self._model["vocab"]

    def symbol_id(self, symbol: str) -> int:
        return self.byte_vocab()[symbol]

    def symbol_bytes(self, symbol: str) -> bytes:
        return gpt2_tokenizer.symbol_bytes(symbol)

    def pre_tokens(self, text: str) -> list[str]:
        """The text cut into the pieces BPE works on (the model's own split), each as text: ' cat'."""
        norm = self.tok.normalizer.normalize_str(text) if self.tok.normalizer is not None else text
        return [norm[s:e] for _, (s, e) in self.tok.pre_tokenizer.pre_tokenize_str(norm)]

    def bpe_replay(self, word: str) -> list[list[str]]:
        """The merge steps that turn one pre-token into its tokens, from its bytes, the lowest-ranked
        adjacent pair first (data/tokenizer.py bpe_replay with this model's merges). A model whose BPE
        takes a piece that is a whole token at once (ignore_merges: Llama 3, Qwen3) ends on that token:
        the replay shows the merges, and chapter 00 picks a word whose replay ends on the tokenizer's ids)."""
        return gpt2_tokenizer.bpe_replay(word, self.merge_ranks())

    def special_ids(self) -> list[int]:
        """The ids of the tokens added beside the merges (<|endoftext|>, <|im_start|>, <|begin_of_text|> ...),
        in id order: special tokens and the few added ones a model keeps in decoded text (Qwen3's <think>)."""
        if not hasattr(self, "_special"):
            self._special = sorted(int(i) for i in self.tok.get_added_tokens_decoder())
        return self._special

    def vocab_facts(self):
        """How the vocabulary is made: single bytes, tokens made by merges, special tokens (data/tokenizer.py
        VocabFacts; `merges` counts the tokens merges make, which is the merge list's length for SmolLM2).
        Counted once per tokenizer: every build of chapter 00's scenes asks."""
        if not hasattr(self, "_vocab_facts"):
            self._vocab_facts = self._count_vocab()
        return self._vocab_facts

    def _count_vocab(self):
        special = set(self.special_ids())
        vocab = self.byte_vocab()
        byte_tokens = sum(1 for s, i in vocab.items() if len(s) == 1 and i not in special)
        return gpt2_tokenizer.VocabFacts(byte_tokens=byte_tokens, merges=self.vocab_size() - byte_tokens - len(special),
                                         special=len(special))

    def vocab_order(self) -> list[tuple[str, int]]:
        """The vocabulary's parts in id order, as runs: [('special', 17), ('bytes', 235), ('merges', 48900)]
        for SmolLM2; ('bytes', 'merges', 'special') for GPT-2, Llama 3 and Qwen3. Walked once per
        tokenizer (a Python loop over the whole vocabulary)."""
        if not hasattr(self, "_vocab_order"):
            self._vocab_order = self._walk_vocab()
        return list(self._vocab_order)

    def _walk_vocab(self) -> list[tuple[str, int]]:
        special = set(self.special_ids())
        runs: list[list] = []
        for i in range(self.vocab_size()):
            s = self.tok.id_to_token(i)
            kind = "special" if i in special else "bytes" if s is not None and len(s) == 1 else "merges"
            if runs and runs[-1][0] == kind:
                runs[-1][1] += 1
            else:
                runs.append([kind, 1])
        return [(k, n) for k, n in runs]

    def merge_rank_of(self, token_id: int) -> int | None:
        """Where the merge that makes a token sits in the merge list (0: learned first), or None for a
        single byte or a special token."""
        if not hasattr(self, "_made_by"):
            vocab = self.byte_vocab()
            self._made_by = {}
            for (a, b), rank in self.merge_ranks().items():
                tid = vocab.get(a + b)
                if tid is not None and (tid not in self._made_by or rank < self._made_by[tid]):
                    self._made_by[tid] = rank
        return self._made_by.get(int(token_id))

    @property
    def bos_text(self) -> str | None:
        """The begin-of-text token's name ('<|begin_of_text|>'), where the model puts one first."""
        return None if self.bos_id is None else self.tok.id_to_token(self.bos_id)
