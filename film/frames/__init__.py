"""The film's own fast frame path: held frames encoded once (holds). manim's internals
live in engine/.
"""
