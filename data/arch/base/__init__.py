"""What every architecture folder builds on (and nothing of them): the uniform Shape and its
component names (spec.py), shared numpy steps (ops.py), the byte-level BPE alphabet (bytelevel.py),
a model tokenizer's common calls (tokens.py) and the hash that names which weights ran (identity.py)."""
