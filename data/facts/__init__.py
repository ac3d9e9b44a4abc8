"""The figures each chapter shows, computed from the bundle and the ledger.

One module per chapter (`data/facts/chNN.py`), of pure functions from the bundle (and,
where a chapter needs it, the ledger or data/flops.py) to numbers and data strings (token
texts, model names). Both the chapter's scenes (scenes/chNN_*.py) and its narration
(voiceover/scripts/chNN.py) read them here, so screen and voice agree by construction.
Nothing here formats for a reader: wording for speech lives in voiceover/ (spoken.py and
the scripts' `values`), formatting for the screen in scenes/style.py.
"""
