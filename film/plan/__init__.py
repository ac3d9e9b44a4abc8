"""The plan of a build: its scene jobs and their cache keys, read from the sources as syntax
trees (keys), the facts kept between runs (source_memo), what a cluster worker must share
with the client (identity), and the build's error (errors).
"""
