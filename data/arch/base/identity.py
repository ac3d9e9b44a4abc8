"""Which weights ran: one hash of a model's tensors, for the bundle's citation (data/extract.py) and
for the dequantized weights a GGUF file's loader keeps (llama/weights.py)."""
from __future__ import annotations

import hashlib


def weights_sha256(model) -> str:
    """Hash of every parameter tensor, in name order: cites exactly which weights ran."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        # the tensor's own memory, read in place (no copy: GPT-2 XL's weights are 6 GB)
        h.update(memoryview(tensor.detach().cpu().contiguous().numpy()).cast("B"))
    return h.hexdigest()
