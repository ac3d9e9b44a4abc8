"""GPT-2's byte-level BPE, offline. It is GPT-2's own, so it lives with its architecture
(data/arch/gpt2/bpe.py); `onepass.data.tokenizer` is that very module, under the name the film's
chapters have always read it by."""
import sys

from onepass.data.arch.gpt2 import bpe

sys.modules[__name__] = bpe
