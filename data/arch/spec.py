"""The uniform shape and its components (data/arch/base/spec.py), by the name readers above
data/arch use: `from onepass.data.arch.spec import Shape, ROPE`."""
from onepass.data.arch.base.spec import (GELU, LAYERNORM, LEARNED, RMSNORM, ROPE, SWIGLU, CaptureError, Shape,
                                         WeightsError)

__all__ = ["GELU", "LAYERNORM", "LEARNED", "RMSNORM", "ROPE", "SWIGLU", "CaptureError", "Shape", "WeightsError"]
