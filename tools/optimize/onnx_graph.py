"""ONNX graph rewrites the quantizer needs.

ONNX Runtime 1.23.2's dynamic quantizer rewrites every Gemm into MatMul + Add before it
quantizes, transposing a transB weight in place. On the exported demo transformer that
rewrite alone moved the fp32 logits by 0.35: nn.TransformerEncoder deep-copies its layer,
so the four random-weight layers are identical, the exporter stores one out_proj weight
and feeds the other layers through Identity nodes, and transposing that shared
initializer for layer 0's Gemm hands the other layers a transposed weight. Rewriting here
first, into a new initializer, keeps the fp32 graph exact (difference 0.0) and the int8
one within 0.004 of it.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper


def gemm_to_matmul(source: str, target: str) -> int:
    """Writes `source` with each Gemm(A, W, C) on a constant W (alpha = beta = 1, no transA)
    as MatMul(A, W') + Add(C); returns how many were rewritten."""
    model = onnx.load(source)
    initializers = {i.name: i for i in model.graph.initializer}
    nodes, rewritten = [], 0
    for node in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if (node.op_type != "Gemm" or node.input[1] not in initializers
                or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0
                or attrs.get("transA", 0)):
            nodes.append(node)
            continue
        weight = numpy_helper.to_array(initializers[node.input[1]])
        if attrs.get("transB", 0):
            weight = weight.T
        weight_name = f"{node.input[1]}_as_matmul_{rewritten}"
        model.graph.initializer.append(
            numpy_helper.from_array(np.ascontiguousarray(weight), weight_name))
        has_bias = len(node.input) > 2 and node.input[2]
        product = f"{node.output[0]}_matmul" if has_bias else node.output[0]
        nodes.append(helper.make_node("MatMul", [node.input[0], weight_name], [product],
                                      name=f"{node.name}_MatMul"))
        if has_bias:
            nodes.append(helper.make_node("Add", [product, node.input[2]], [node.output[0]],
                                          name=f"{node.name}_Add"))
        rewritten += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    used = {name for node in model.graph.node for name in node.input}
    kept = [i for i in model.graph.initializer if i.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    onnx.save(model, target)
    return rewritten
