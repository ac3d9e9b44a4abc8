"""x264's settings for the film's pictures, in a module of their own: the scene processes (manim's
config, set in film/run/render_job.py, which engine/frames.py's segment encoder reads) and the described
cut (film/kit/describe.py, in a process that may never import manim) use the same ones."""

# x264's 'veryfast' preset instead of manim's default ('medium'): on chapter 02's first scene at
# 1080p60, encoding took 22 s of CPU instead of 32 s and the file came out smaller (same crf).
# On top of it (issue 24; bench/render_speed.py --encoders):
# - subme=0 (whole-pixel motion search only): 0.70x the CPU of plain 'veryfast', 1.04x the size,
#   SSIM 0.9986 (900 frames of chapter 02's Scores scene at 1080p60). x264's per-frame cost is
#   mostly fixed work (a held frame costs about as much as a moving one), and sub-pixel search
#   is a part that flat, slow-moving graphics do not need;
# - then, on all 1,997 frames of chapter 02's Mixing scene at 1080p60: trellis=0 (no trellis
#   quantization) 0.98x the CPU, the same size, SSIM 1.0000; bframes=1 (one B-frame between
#   references, not up to 3) 0.91x, 1.20x the size, SSIM 0.9993;
# - then (this machine, best of 3 interleaved runs on 600 distinct frames of chapter 02's Scores
#   scene at 1080p60, holds left out since they no longer reach x264): bframes=0 with
#   rc-lookahead=3 (no B-frames; a 3-frame lookahead for mbtree instead of veryfast's 10) 0.79x
#   the CPU at 0.97x the size, SSIM 0.9972 against the setting before. No B-frames alone had cost
#   1.14-1.50x the size; the short lookahead alone saved size (0.86x) but little CPU. b-adapt=0,
#   scenecut=0 and 8x8dct=0 each measured within this machine's noise (0.9-1.0x).
# Faster presets cost far more in size ('superfast' 1.72x for 0.71x, 'ultrafast' 4.3x for 0.47x);
# no-mbtree cost CPU and size; tune=animation/stillimage cost more CPU for the same size.
# One encoder thread: with x264's own (frame) threads, the same frames came out differently encoded
# in about 1 render of 6 (decoded frames off by up to 24 levels), so a re-render, a cluster render
# and the cache disagreed. Sliced threads are deterministic but cost more CPU (the slices' borders)
# and help only a scene rendering alone (HACKING.md, "Identical frames").
ENCODER_OPTIONS = {"preset": "veryfast", "threads": "1", "x264-params": "subme=0:trellis=0:bframes=0:rc-lookahead=3"}
