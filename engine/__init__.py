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
    encoding.py         x264's settings for the film's pictures (scenes and the described cut)
    still_layer.py      still shapes drawn once per play (what Camera.display_vectorized reads, restated)
    unseen.py           a Transform's parts that paint nothing all through it, left alone until its end;
                        the others' interpolation done for all parts at once
    copies.py           a mobject's deep copy as manim makes it, without copy.deepcopy's machinery
    glyphs.py           a Text's SVG read glyph by glyph, each outline parsed once per process
    text.py             what onepass does to a Text beyond its arguments
    dry_run.py          dry_run(): a scene run with nothing written and nothing drawn (tests, bench);
                        quick_plays(): a skipped play without what only its frames use
    stored.py           a built Text as data only (JSON and arrays), for the label shelf
    animation.py        Indication: Indicate with its target made by one overridable method
    narration.py        NarratedScene: a scene that speaks a line per block (public Scene API only)
    voiceover_plugin.py manim-voiceover's network voices, its prompting helpers replaced

Layers: render.py -> film/ -> scenes/ -> voiceover/ -> engine/ -> words/ -> data/ (engine imports
nothing of film/, scenes/ or voiceover/; the film's own parts come in as arguments).

INTERNALS lists each internal, what relies on it, where that lives, and the names
tests/test_engine.py refuses outside engine/.
"""
from __future__ import annotations

# (internal, what relies on it, where it is used, the names tests/test_engine.py looks for outside
# engine/) -- before the boundary, these were used from film/run/render_job.py, film/still_layer.py,
# scenes/text.py, scenes/base.py, scenes/follow.py, voiceover/services.py and voiceover/guard.py; the
# dry-run recipe from tests/helpers.py, three tests and three bench scripts.
# A name is one of three kinds: `name`, a name only this internal has, refused anywhere outside
# engine/ (an attribute, an imported name, or a string that names it: a config key, a mock.patch
# target); `_name`, a private name of manim's, refused by the private-name rules (on anything
# imported from manim, or `self._name` in a class drawn from manim's); `Class.name`, a public name
# that every mobject or animation has, internal only on that class: refused where it is read from a
# value the module makes of that class by name, or set on the class itself.
INTERNALS = (
    ("manim.scene.video_segment_encoder.VideoSegmentEncoder (not exported by manim)",
     "SegmentEncoder subclasses it", "engine/frames.py", ("VideoSegmentEncoder", "video_segment_encoder")),
    ("VideoSegmentEncoder._container, ._stream, ._next_pts, ._closed, ._operation_error()",
     "SegmentEncoder: frames already converted, holds as two frames, packets hashed", "engine/frames.py",
     ("_container", "_stream", "_next_pts", "_closed", "_operation_error")),
    ("VideoSegmentEncoder.__init__ called again on the same object", "SegmentEncoder._reopen (a hold's encoder)",
     "engine/frames.py", ("VideoSegmentEncoder",)),
    ("manim._config.video_encoder.VideoEncoderSpec (its fields; dataclasses.replace)",
     "a hold's x264 zone option", "engine/frames.py", ("_config", "video_encoder")),   # the class itself:
    # engine/frames.py's, since SegmentEncoder takes one
    ("SceneFileWriter._create_segment_encoder (overridden)", "FilmFileWriter: its encoder class",
     "engine/frames.py", ("_create_segment_encoder",)),
    ("SceneFileWriter._current_encode_job", "FilmFileWriter.write_frame: converts only while a segment is open",
     "engine/frames.py", ("_current_encode_job",)),
    ("SceneFileWriter.abort_encode_jobs (overridden), its open job's frame queue and (-1, None) end mark",
     "FilmFileWriter.abort_encode_jobs: a scene stopped inside seal() still ends its encoder thread",
     "engine/frames.py", ("abort_encode_jobs",)),
    ("VMobject.get_subpaths_from_points, Mobject.get_family, VMobject.get_points_defining_boundary (replaced "
     "while a scene renders), VMobject.get_anchors' rows", "faster_manim(): subpaths_from_points, family_of, "
     "points_defining_boundary", "engine/frames.py",
     ("get_subpaths_from_points", "Mobject.get_family", "VMobject.get_family", "VMobject.get_points_defining_boundary")),
    ("manim.mobject.geometry.polygram's ArcBetweenPoints (the name round_corners calls, replaced while a scene "
     "renders); Arc's points at the origin, then put_start_and_end_on", "faster_manim(): corner_arc",
     "engine/frames.py", ("polygram",)),
    ("Polygram.round_corners (replaced while a scene renders: new points from the outline's points and its "
     "arguments alone), Polygram.get_vertex_groups (what it reads)", "faster_manim(): round_corners, each "
     "outline rounded once per process", "engine/frames.py", ("Polygram.round_corners", "get_vertex_groups")),
    ("SVGMobject.generate_mobject (replaced for a Text while a scene renders or runs dry), its "
     "modify_xml_tree and get_mobjects_from; cairo's SVG of a Text (glyph symbols placed by uses)",
     "faster_manim(): glyph_svg_mobject, each glyph parsed once per process", "engine/glyphs.py",
     ("generate_mobject", "modify_xml_tree", "get_mobjects_from")),
    ("a copy of Mobject's _iter_family order (remove_list_redundancies)", "family_of", "engine/frames.py",
     ("_iter_family", "remove_list_redundancies")),
    ("Mobject.__deepcopy__ (replaced while a scene renders or runs dry), restated with copy.deepcopy's "
     "rules for what a mobject holds", "faster_copies(): mobject_deepcopy, deep_copy", "engine/copies.py",
     ("Mobject.__deepcopy__",)),
    ("Camera.set_cairo_context_path's cairo calls, restated", "trace_path, FilmCamera", "engine/frames.py",
     ("set_cairo_context_path",)),
    ("CairoRenderer.update_frame/render/freeze_current_frame, static_image", "FilmRenderer", "engine/frames.py",
     ("update_frame", "freeze_current_frame", "static_image")),
    ("config from_animation_number past every play; CairoRenderer.update_frame and get_frame replaced while it "
     "lasts (add_frame drops a skipped play's frame unread)",
     "dry_run(): a scene run with nothing written or drawn", "engine/dry_run.py",
     ("from_animation_number", "update_frame", "get_frame")),
    ("ConvertToOpenGL._converted_classes (set aside while tempconfig restores a renderer that did not change); "
     "ManimConfig's renderer setter re-assigning each such class's __bases__",
     "dry_run(): settings_for_a_while", "engine/dry_run.py", ("ConvertToOpenGL", "_converted_classes")),
    ("Transform.begin (replaced in an undrawn dry run), Animation.get_sub_alpha, starting_mobject, target_copy, "
     "FadeIn/FadeOut.create_target; Scene.get_moving_and_static_mobjects and Scene.update_to_time (replaced "
     "there; the latter restated), last_t",
     "quick_plays(): a skipped play without a starting copy or the moving/static split", "engine/dry_run.py",
     ("get_moving_and_static_mobjects", "starting_mobject", "get_sub_alpha", "update_to_time")),
    ("Animation.interpolate_mobject (restated for Transform while a scene renders or runs dry), "
     "Transform.get_all_families_zipped, interpolate_submobject, replace_mobject_with_target_in_scene, remover; "
     "Mobject.interpolate leaving a channel 0 at both ends 0; Mobject.interpolate and VMobject.interpolate_color "
     "restated (bezier.interpolate on points and the seven style attributes; copies at alpha 1), straight_path() "
     "returning bezier.interpolate, get_sub_alpha the same for every part at lag_ratio 0",
     "transform_interpolate_mobject and UNSEEN (a Transform's parts that paint nothing, neither moved nor drawn); "
     "interpolate_parts (all parts' arithmetic at once)", "engine/unseen.py, engine/still_layer.py",
     ("get_all_families_zipped", "interpolate_submobject", "replace_mobject_with_target_in_scene")),
    ("Mobject.family_members_with_points (replaced while a scene renders or runs dry), get_num_points as "
     "len(points)", "faster_manim(): members_with_points", "engine/frames.py", ("Mobject.family_members_with_points",)),
    ("Scene.get_mobject_family_members (replaced while a scene renders or runs dry), restated: "
     "extract_mobject_family_members over Scene.mobjects with Mobject.get_family, camera.use_z_index",
     "faster_manim(): scene_family_members", "engine/frames.py",
     ("Scene.get_mobject_family_members", "extract_mobject_family_members", "use_z_index")),
    ("Mobject.length_over_dim, get_critical_point, get_merged_array (replaced while a scene renders or runs dry), "
     "restated with numpy: reduce_across_dimension's Python max and min, get_extremum_along_dim's np.min and "
     "np.max, get_merged_array's np.append", "faster_manim(): length_over_dim, critical_point, merged_array",
     "engine/frames.py", ("Mobject.length_over_dim", "Mobject.get_critical_point", "get_merged_array",
                          "reduce_across_dimension", "get_extremum_along_dim")),
    ("Camera.display_vectorized's inputs, restated; get_mobjects_to_display; pixel_array_to_cairo_context",
     "StillLayer.look_of, capture, grow", "engine/still_layer.py",
     ("display_vectorized", "get_mobjects_to_display", "pixel_array_to_cairo_context")),
    ("Text.submobjects (its glyphs), original_text, text, initial_height, chars",
     "compact_text, composed, glyphs_of, set_glyphs, set_string, string_of", "engine/text.py",
     ("Text.submobjects", "original_text", "Text.text", "initial_height", "chars")),
    ("Text.id_to_vgroup_dict, svg_default, path_string_config; each glyph's path_obj",
     "compact_text (PARSE_ONLY), light", "engine/text.py",
     ("id_to_vgroup_dict", "svg_default", "path_string_config", "path_obj")),
    ("Indicate.scale_factor, Indicate.color (read in create_target)", "Indication (scenes/follow.py's Swell)",
     "engine/animation.py", ("Indicate.scale_factor", "Indicate.color")),
    ("manim_voiceover.helper's prompt_ask_missing_extras, prompt_ask_missing_package, create_dotenv_file "
     "(replaced), a module-level input", "install(): never a question on stdin", "engine/voiceover_plugin.py",
     ("prompt_ask_missing_extras", "prompt_ask_missing_package", "create_dotenv_file")),
    ("manim-voiceover's network service classes (gtts, openai, azure, elevenlabs, gemini)",
     "service_class(kind): voiceover/services.py's NetworkService", "engine/voiceover_plugin.py",
     ("manim_voiceover", "GTTSService", "OpenAIService", "AzureService", "ElevenLabsService", "GeminiService")),
)
# gone, replaced by onepass's own code on manim's public API: manim-voiceover's VoiceoverScene and
# its tracker (engine/narration.py), SpeechService._wrap_generate_from_text (services' own
# generate_from_text), CairoRenderer._original_skipping_status (VoiceoverScene reset it)
