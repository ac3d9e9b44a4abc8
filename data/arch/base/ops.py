"""Numpy arithmetic the architectures share (their derive and cross-check steps)."""
from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def causal_mask(scores_scaled: np.ndarray) -> np.ndarray:
    """[..., T, T] scores with the future (above the diagonal) set to -inf, as float32."""
    T = scores_scaled.shape[-1]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)           # [T, T] True above the diagonal
    return np.where(future, -np.inf, scores_scaled).astype(np.float32)
