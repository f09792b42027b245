"""Model files with a real model's architecture, built offline from the bundled embedding model.

No PyPI package ships an ONNX cross-encoder (``../shared/FACTS.md``), so the rerank path would
otherwise never run in tests or benchmarks. :func:`minilm_shaped_cross_encoder` builds one with the
shape of ms-marco-MiniLM-L-6-v2 (the usual small cross-encoder): the shipped all-MiniLM-L6-v2
encoder (6 layers, 384 wide, int8 weights, float products; not the graph ``model_quantize`` derives
from it, whose activations are quantized per run, so a pair's score would depend on the pairs run
beside it) reads the query/passage pair as one sequence, and a linear head on the ``[CLS]``
position gives one logit per pair. The head's weights are seeded random numbers,
so its scores say nothing about relevance: it is fit for exercising the product's rerank code with
real ONNX Runtime inference and for timing it (the cost is the encoder's, as in the real model),
never for judging rerank quality.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from daemon.index.model_files import TOKENIZER_FILES, bundled_sources

__all__ = ["minilm_shaped_cross_encoder"]

_HIDDEN = 384


def minilm_shaped_cross_encoder(embedding_dir: Path, out_dir: Path, *, seed: int = 0) -> Path:
    """Write the cross-encoder into ``out_dir`` (created) and return it; ``embedding_dir`` is the
    bundled model's directory (``daemon.index.model_files.bundled_model_dir``), for its tokenizer."""
    from onnx import ModelProto, TensorProto, helper

    model = ModelProto()
    model.ParseFromString(bundled_sources().onnx_file.read_bytes())
    graph = model.graph
    (hidden,) = [o.name for o in graph.output]
    rng = random.Random(seed)
    weights = [rng.gauss(0.0, 1.0 / _HIDDEN**0.5) for _ in range(_HIDDEN)]
    graph.initializer.extend(
        [
            helper.make_tensor("ided_cls_index", TensorProto.INT64, [], [0]),
            helper.make_tensor("ided_head_weight", TensorProto.FLOAT, [_HIDDEN, 1], weights),
        ]
    )
    graph.node.extend(
        [
            helper.make_node("Gather", [hidden, "ided_cls_index"], ["ided_cls"], axis=1),
            helper.make_node("MatMul", ["ided_cls", "ided_head_weight"], ["logits"]),
        ]
    )
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1]))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "model.onnx").write_bytes(model.SerializeToString())
    for name in TOKENIZER_FILES:
        if (embedding_dir / name).is_file():
            shutil.copyfile(embedding_dir / name, out_dir / name)
    return out_dir
