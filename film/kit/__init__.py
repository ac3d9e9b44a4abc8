"""The course kit made from rendered chapters: a clip per narration beat, the lecture deck
(offline HTML, PowerPoint), handouts, notebooks and the publishing kit.
"""
