"""The engine boundary: every use of manim's and manim-voiceover's internals, in one package.

onepass draws with manim and reaches past its public API where the film needs speed or control
manim does not offer. All of that lives here, against the versions engine/versions.py declares
(manim 0.22.x, manim-voiceover 0.4.x), checked at run time before anything renders (render.py and
every scene process, film/run/render_job.py). tests/test_frame_path.py is the boundary's contract: each
internal below exists and behaves as assumed; tests/test_engine.py checks that no module outside
engine/ uses one. Where manim offers an extension point (a class passed in, a method meant to be
overridden) engine/ subclasses; the rest of onepass imports what it needs from here.

    versions.py         SUPPORTED and check(): the versions, said once
    frames.py           the scene process's renderer, camera, file writer and segment encoder
    still_layer.py      still shapes drawn once per play (what Camera.display_vectorized reads, restated)
    text.py             what onepass does to a Text beyond its arguments
    stored.py           a built Text as data only (JSON and arrays), for the label shelf
    animation.py        Indication: Indicate with its target made by one overridable method
    narration.py        NarratedScene: a scene that speaks a line per block (public Scene API only)
    voiceover_plugin.py manim-voiceover's network voices, its prompting helpers replaced

Layers: render.py -> film/ -> scenes/ -> voiceover/ -> engine/ -> words/ -> data/ (engine imports
nothing of film/, scenes/ or voiceover/; the film's own parts come in as arguments).

INTERNALS lists each internal, what relies on it, and where that lives.
"""
from __future__ import annotations

# (internal, what relies on it, where it is used) -- before the boundary, these were used from
# film/run/render_job.py, film/still_layer.py, scenes/text.py, scenes/base.py, scenes/follow.py,
# voiceover/services.py and voiceover/guard.py
INTERNALS = (
    ("manim.scene.video_segment_encoder.VideoSegmentEncoder (not exported by manim)",
     "SegmentEncoder subclasses it", "engine/frames.py"),
    ("VideoSegmentEncoder._container, ._stream, ._next_pts, ._closed, ._operation_error()",
     "SegmentEncoder: frames already converted, holds as two frames, packets hashed", "engine/frames.py"),
    ("VideoSegmentEncoder.__init__ called again on the same object", "SegmentEncoder._reopen (a hold's encoder)",
     "engine/frames.py"),
    ("manim._config.video_encoder.VideoEncoderSpec (its fields; dataclasses.replace)",
     "a hold's x264 zone option", "engine/frames.py"),
    ("SceneFileWriter._create_segment_encoder (overridden)", "FilmFileWriter: its encoder class",
     "engine/frames.py"),
    ("SceneFileWriter._current_encode_job", "FilmFileWriter.write_frame: converts only while a segment is open",
     "engine/frames.py"),
    ("VMobject.get_subpaths_from_points, Mobject.get_family (replaced while a scene renders)",
     "faster_manim(): subpaths_from_points, family_of", "engine/frames.py"),
    ("a copy of Mobject's _iter_family order (remove_list_redundancies)", "family_of", "engine/frames.py"),
    ("Camera.set_cairo_context_path's cairo calls, restated", "trace_path, FilmCamera", "engine/frames.py"),
    ("CairoRenderer.update_frame/render/freeze_current_frame, static_image", "FilmRenderer", "engine/frames.py"),
    ("Camera.display_vectorized's inputs, restated; get_mobjects_to_display; pixel_array_to_cairo_context",
     "StillLayer.look_of, capture, grow", "engine/still_layer.py"),
    ("Text.submobjects (its glyphs), original_text, text, initial_height, chars",
     "compact_text, composed, set_glyphs, set_string, string_of", "engine/text.py"),
    ("Text.id_to_vgroup_dict, svg_default, path_string_config; each glyph's path_obj",
     "compact_text (PARSE_ONLY), light", "engine/text.py"),
    ("every attribute of a Text, its glyphs and colours (vars(); cls.__new__ + __dict__, as Mobject.__deepcopy__)",
     "the label shelf's data-only files: dumps, loads, check", "engine/stored.py"),
    ("Indicate.scale_factor, Indicate.color (read in create_target)", "Indication (scenes/follow.py's Swell)",
     "engine/animation.py"),
    ("manim_voiceover.helper's prompt_ask_missing_extras, prompt_ask_missing_package, create_dotenv_file "
     "(replaced), a module-level input", "install(): never a question on stdin", "engine/voiceover_plugin.py"),
    ("manim-voiceover's network service classes (gtts, openai, azure, elevenlabs, gemini)",
     "service_class(kind): voiceover/services.py's NetworkService", "engine/voiceover_plugin.py"),
)
# gone, replaced by onepass's own code on manim's public API: manim-voiceover's VoiceoverScene and
# its tracker (engine/narration.py), SpeechService._wrap_generate_from_text (services' own
# generate_from_text), CairoRenderer._original_skipping_status (VoiceoverScene reset it)
