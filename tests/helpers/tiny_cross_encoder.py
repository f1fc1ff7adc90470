"""A tiny cross-encoder ONNX model the tests build themselves (none can be downloaded here),
with the tokenizer of the local all-MiniLM-L6-v2, registered in fastembed under `NAME`.

Its logit for a (query, document) pair is how many times the document's tokens (segment B:
token_type_ids 1) hold `WORD`: a test can predict the order it gives.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

NAME = "wiki-memory-tests/tiny-cross-encoder"
WORD = "canary"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json", "vocab.txt")


def build(folder: Path, tokenizer_from: Path) -> Path:
    """The model folder (model.onnx and the tokenizer's files) in `folder`."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (tokenizer_from / name).exists():
            shutil.copy(tokenizer_from / name, folder / name)
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    weights = np.zeros(len(vocab), dtype=np.float32)
    weights[vocab[WORD]] = 1.0
    ints = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    nodes = [
        helper.make_node("Gather", ["weights", "input_ids"], ["hits"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["segment"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["hits", "mask"], ["kept"]),
        helper.make_node("Mul", ["kept", "segment"], ["in_document"]),
        helper.make_node("ReduceSum", ["in_document", "axes"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_cross_encoder",
        ints,
        [out],
        [numpy_helper.from_array(weights, "weights"), numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return folder


def register() -> None:
    """`NAME` in fastembed's cross-encoders (once per process)."""
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    if NAME.lower() in {m["model"].lower() for m in TextCrossEncoder.list_supported_models()}:
        return
    TextCrossEncoder.add_custom_model(NAME, sources=ModelSource(hf=NAME), model_file="model.onnx")
