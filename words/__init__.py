"""Every word the film speaks or shows, as data (the layer between voiceover/ and data/).

    catalog.py   the catalogs (words/catalogs/<lang>/*.po, gettext PO): a language, a lecturer's
                 script over it, and the checks against English (placeholders, markers, ids)
    markup.py    {placeholders} and <bookmark mark="..."/> markers in a message
    pseudo.py    the pseudo-language qps, generated from English
    numbers.py   the one formatting layer: numbers on screen and as spoken
"""
