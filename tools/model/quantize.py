"""Weight-only quantization of an exported fp32 decoder, with the onnx package alone.

  - every MatMul whose right-hand side is a 2-D initializer (all linear layers and the tied lm_head)
    becomes com.microsoft MatMulNBits (bits 8 or 4, block size 32 along K, asymmetric with zero points);
  - the embedding Gather on the fp32 table becomes Gather on an int8 table (symmetric, one scale per row)
    followed by Cast and Mul with the gathered row scales (standard ONNX ops), so the fp32 table is gone.

usage: /usr/bin/python3 -m tools.model.quantize in.onnx out.onnx [--bits 8] [--block 32] [--accuracy-level N]
"""
from __future__ import annotations

import argparse
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantize_blocks(w_nk: np.ndarray, bits: int, block: int):
    """w_nk [N, K] -> (packed [N, k_blocks, blob], scales [N*k_blocks], zero_points packed)."""
    N, K = w_nk.shape
    kb = (K + block - 1) // block
    pad = kb * block - K
    w = np.pad(w_nk, ((0, 0), (0, pad))).reshape(N, kb, block).astype(np.float32)
    qmax = (1 << bits) - 1
    lo = np.minimum(w.min(-1), 0.0)
    hi = np.maximum(w.max(-1), 0.0)
    scale = (hi - lo) / qmax
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    zp = np.clip(np.round(-lo / scale), 0, qmax).astype(np.uint8)
    q = np.clip(np.round(w / scale[..., None]) + zp[..., None], 0, qmax).astype(np.uint8)
    if bits == 8:
        packed = q
        zp_packed = zp.reshape(-1)
    elif bits == 4:
        packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
        zpad = zp if kb % 2 == 0 else np.pad(zp, ((0, 0), (0, 1)))
        zp_packed = (zpad[:, 0::2] | (zpad[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    else:
        raise ValueError(bits)
    deq = ((q.astype(np.float32) - zp[..., None]) * scale[..., None]).reshape(N, kb * block)[:, :K]
    return packed, scale.reshape(-1), zp_packed, deq


def int8_rows(table: np.ndarray):
    """Symmetric int8 rows (the embedding table): (codes int8 [V, H], scales float32 [V]); row = codes * scale."""
    table = table.astype(np.float32)
    sc = (np.abs(table).max(1) / 127.0).astype(np.float32)
    sc = np.where(sc == 0, 1.0, sc).astype(np.float32)
    return np.clip(np.round(table / sc[:, None]), -127, 127).astype(np.int8), sc


def quantize_model(src: str, dst: str, bits: int = 8, block: int = 32, accuracy_level: int = 0) -> dict:
    m = onnx.load(src)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    consumers = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    new_nodes = []
    remove = set()
    stats = {"matmuls": 0, "max_rel_err": 0.0}
    for n in g.node:
        if n.op_type == "MatMul" and n.input[1] in inits and len(inits[n.input[1]].dims) == 2:
            w_kn = numpy_helper.to_array(inits[n.input[1]])
            K, N = w_kn.shape
            packed, scales, zps, deq = quantize_blocks(np.ascontiguousarray(w_kn.T), bits, block)
            err = float(np.abs(deq - w_kn.T).max() / (np.abs(w_kn).max() + 1e-12))
            stats["max_rel_err"] = max(stats["max_rel_err"], err)
            base = n.input[1].replace(":", "_").replace(".", "_")
            names = [f"{base}_q{bits}", f"{base}_scales", f"{base}_zp"]
            g.initializer.extend([numpy_helper.from_array(packed, names[0]),
                                  numpy_helper.from_array(scales, names[1]),
                                  numpy_helper.from_array(zps, names[2])])
            new_nodes.append(helper.make_node("MatMulNBits", [n.input[0]] + names, list(n.output),
                                              name=(n.name or base) + "_MatMulNBits", domain="com.microsoft",
                                              K=K, N=N, bits=bits, block_size=block,
                                              accuracy_level=accuracy_level))
            if len(consumers.get(n.input[1], [])) == 1:
                remove.add(n.input[1])
            stats["matmuls"] += 1
        elif n.op_type == "Gather" and n.input[0] in inits and len(inits[n.input[0]].dims) == 2:
            q, sc = int8_rows(numpy_helper.to_array(inits[n.input[0]]))
            base = n.input[0].replace(".", "_")
            qn, sn = base + "_int8", base + "_row_scale"
            g.initializer.extend([numpy_helper.from_array(q, qn), numpy_helper.from_array(sc, sn)])
            out = n.output[0]
            new_nodes += [
                helper.make_node("Gather", [qn, n.input[1]], [out + "_q"], name=base + "_gather_q", axis=0),
                helper.make_node("Cast", [out + "_q"], [out + "_f"], name=base + "_cast", to=TensorProto.FLOAT),
                helper.make_node("Gather", [sn, n.input[1]], [out + "_s"], name=base + "_gather_s", axis=0),
                helper.make_node("Unsqueeze", [out + "_s", base + "_axes"], [out + "_s2"], name=base + "_unsq"),
                helper.make_node("Mul", [out + "_f", out + "_s2"], [out], name=base + "_dequant"),
            ]
            g.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), base + "_axes"))
            if len(consumers.get(n.input[0], [])) == 1:
                remove.add(n.input[0])
        else:
            new_nodes.append(n)
    del g.node[:]
    g.node.extend(new_nodes)
    keep = [i for i in g.initializer if i.name not in remove]
    del g.initializer[:]
    g.initializer.extend(keep)
    if not any(o.domain == "com.microsoft" for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(m, dst)
    stats["bytes"] = os.path.getsize(dst)
    return stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--bits", type=int, default=8)
    ap.add_argument("--block", type=int, default=32)
    ap.add_argument("--accuracy-level", type=int, default=0)
    a = ap.parse_args()
    print(quantize_model(a.src, a.dst, a.bits, a.block, a.accuracy_level))


if __name__ == "__main__":
    main()
