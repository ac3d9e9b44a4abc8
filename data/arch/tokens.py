"""A model's tokenizer: it lives in data/arch/base/tokens.py (below every architecture folder, which
all build on it); this name is kept for readers above data/arch. Edit that file, not this one."""
from onepass.data.arch.base.tokens import *  # noqa: F401,F403
from onepass.data.arch.base.tokens import ModelTokenizer  # noqa: F401
