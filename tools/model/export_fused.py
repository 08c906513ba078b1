"""Build a lean ONNX graph of a LlamaForCausalLM, in the same decoder contract as export_onnx.py (same
inputs, outputs, names and shapes), with onnxruntime's fused CPU operators where they are exact.

Why: torch.onnx's trace of the eager model has about 80 nodes per layer, most of them shape arithmetic
(Shape/Gather/Unsqueeze/Concat/Reshape from dynamic sizes), rotary slicing and the grouped-KV Expand; on
a small model they cost more than the matrix products. Here every reshape has a constant target (0 and -1
dims), rotary is one RotaryEmbedding per tensor, RMSNorm and the residual add are one
SkipSimplifiedLayerNormalization, the causal/padding mask is built once for all layers, and grouped query
heads are folded into the rows of the attention product ([b, kv_heads, rep * seq, d] against the cache)
instead of copying the KV cache rep times.

Not GroupQueryAttention, although it was as fast: it derives positions from attention_mask, so left-padded
rows come out wrong, and its multi-token-with-past path rounds differently from its one-token path (greedy
text under prompt-lookup verification changed on 2 of 12 real-code prompts over 64 tokens, at tokens 20
and 63; with this graph 1 of 12, at token 62, a near-tie that torch.onnx's fp32 graph breaks the same way).

usage: python3 export_fused.py --checkpoint ckpt.pt --out model.onnx [--check]
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import LlamaForCausalLM  # noqa: E402


def build_fused(model: LlamaForCausalLM, path: str) -> None:
    cfg = model.cfg
    model = model.float().eval()
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    H, nh, kvh, D, L = cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim, cfg.num_hidden_layers
    eps = float(cfg.rms_norm_eps)
    inits: list = []
    nodes: list = []

    def init(name, arr):
        arr = np.asarray(arr)  # not ascontiguousarray: it turns 0-d scalars into shape (1,)
        inits.append(numpy_helper.from_array(arr if arr.flags.c_contiguous else arr.copy(order="C"), name))
        return name

    def node(op, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=f"{op}_{len(nodes)}", domain=domain, **attrs))
        return outs[0] if len(outs) == 1 else outs

    # graph inputs / outputs (contract of export_onnx.py)
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "kept", cfg.vocab_size])]
    for i in range(L):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", TensorProto.FLOAT,
                                                        ["batch", kvh, "past", D]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", TensorProto.FLOAT,
                                                         ["batch", kvh, "total", D]))
    inputs.append(helper.make_tensor_value_info("num_logits_to_keep", TensorProto.INT64, []))

    init("one_i64", np.array(1, dtype=np.int64))
    init("axis1", np.array([1], dtype=np.int64))
    ids_shape = node("Shape", ["input_ids"], ["ids_shape"])
    seq = node("Gather", [ids_shape, "one_i64"], ["seq_len"], axis=0)
    total = node("Gather", [node("Shape", ["attention_mask"], ["mask_shape"]), "one_i64"], ["total_len"], axis=0)

    # rotary caches [max_positions, head_dim / 2] (non-interleaved halves, as rotate_half)
    inv_freq = 1.0 / (cfg.rope_theta ** (np.arange(0, D, 2, dtype=np.float64) / D))
    freqs = np.arange(cfg.max_position_embeddings, dtype=np.float64)[:, None] * inv_freq[None, :]
    init("cos_cache", np.cos(freqs).astype(np.float32))
    init("sin_cache", np.sin(freqs).astype(np.float32))

    # mask, once for all layers: query i (absolute past + i) sees key j iff j <= past + i and the key is not
    # padding; rows repeated for the query heads that share a KV head: [batch, 1, rep * seq, total]
    rep = nh // kvh
    past_len = node("Sub", [total, seq], ["past_len"])
    q_pos = node("Range", [past_len, total, "one_i64"], ["q_pos"])
    k_pos = node("Range", [init("zero_i64", np.array(0, dtype=np.int64)), total, "one_i64"], ["k_pos"])
    causal = node("LessOrEqual", [node("Unsqueeze", [k_pos, init("axis0", np.array([0], dtype=np.int64))], ["k_row"]),
                                  node("Unsqueeze", [q_pos, "axis1"], ["q_col"])], ["causal"])
    keys = node("Unsqueeze", [node("Greater", ["attention_mask", "zero_i64"], ["key_ok"]), init("axes12", np.array([1, 2], dtype=np.int64))], ["key_ok4"])
    allowed = node("And", [causal, keys], ["allowed"])
    mask = node("Tile", [allowed, init("tile_rep", np.array([1, 1, rep, 1], dtype=np.int64))], ["mask_rep"])
    init("neg_f", np.array(-1e9, dtype=np.float32))
    shape_kv = init("shape_kv", np.array([0, 0, kvh, D], dtype=np.int64))
    shape_q5 = init("shape_q5", np.array([0, 0, kvh, rep, D], dtype=np.int64))
    shape_grouped = init("shape_grouped", np.array([0, 0, -1, D], dtype=np.int64))
    shape_heads = init("shape_heads", np.array([0, nh, -1, D], dtype=np.int64))
    shape_flat = init("shape_flat", np.array([0, 0, nh * D], dtype=np.int64))
    split = init("qkv_split", np.array([nh * D, kvh * D, kvh * D], dtype=np.int64))

    x = node("Gather", [init("model.embed_tokens.weight", sd["model.embed_tokens.weight"]), "input_ids"], ["embeds"], axis=0)
    residual = None
    pending = x  # output of the previous block, not yet added to the residual stream
    for i in range(L):
        p = f"model.layers.{i}."
        w_in = init(p + "input_layernorm.weight", sd[p + "input_layernorm.weight"])
        if residual is None:
            h = node("SimplifiedLayerNormalization", [pending, w_in], [f"h{i}"], axis=-1, epsilon=eps, stash_type=1)
            residual = pending
        else:
            h, _, _, residual = node("SkipSimplifiedLayerNormalization", [pending, residual, w_in],
                                     [f"h{i}", "", "", f"res{i}a"], domain="com.microsoft", epsilon=eps)
        a = p + "self_attn."
        # 1/sqrt(head_dim) folded into the query weights (rotary is linear, so it commutes)
        scale = 1.0 / math.sqrt(D)
        wqkv = np.concatenate([sd[a + "q_proj.weight"] * scale, sd[a + "k_proj.weight"], sd[a + "v_proj.weight"]], 0).T
        qkv = node("MatMul", [h, init(a + "qkv_proj.weight", wqkv)], [f"qkv{i}"])
        if cfg.attention_bias:
            b = np.concatenate([sd[a + "q_proj.bias"] * scale, sd[a + "k_proj.bias"], sd[a + "v_proj.bias"]], 0)
            qkv = node("Add", [qkv, init(a + "qkv_proj.bias", b)], [f"qkvb{i}"])
        q, k, v = node("Split", [qkv, split], [f"q{i}", f"k{i}", f"v{i}"], axis=-1)
        q = node("RotaryEmbedding", [q, "position_ids", "cos_cache", "sin_cache"], [f"qr{i}"], domain="com.microsoft",
                 interleaved=0, num_heads=nh)
        k = node("RotaryEmbedding", [k, "position_ids", "cos_cache", "sin_cache"], [f"kr{i}"], domain="com.microsoft",
                 interleaved=0, num_heads=kvh)
        k = node("Transpose", [node("Reshape", [k, shape_kv], [f"k4_{i}"])], [f"kt{i}"], perm=[0, 2, 1, 3])
        v = node("Transpose", [node("Reshape", [v, shape_kv], [f"v4_{i}"])], [f"vt{i}"], perm=[0, 2, 1, 3])
        k = node("Concat", [f"past_key_values.{i}.key", k], [f"present.{i}.key"], axis=2)
        v = node("Concat", [f"past_key_values.{i}.value", v], [f"present.{i}.value"], axis=2)
        # grouped query heads without copying the KV cache: [b, kvh, rep * seq, D] against [b, kvh, total, D]
        q = node("Transpose", [node("Reshape", [q, shape_q5], [f"q5_{i}"])], [f"q5t{i}"], perm=[0, 2, 3, 1, 4])
        q = node("Reshape", [q, shape_grouped], [f"qg{i}"])
        scores = node("MatMul", [q, node("Transpose", [k], [f"kT{i}"], perm=[0, 1, 3, 2])], [f"scores{i}"])
        # masked scores replaced (not added to), as the reference does: fully masked padding rows stay uniform
        probs = node("Softmax", [node("Where", [mask, scores, "neg_f"], [f"masked{i}"])], [f"probs{i}"], axis=-1)
        ctx = node("Reshape", [node("MatMul", [probs, v], [f"ctxg{i}"]), shape_heads], [f"ctxh{i}"])
        attn = node("Reshape", [node("Transpose", [ctx], [f"ctxt{i}"], perm=[0, 2, 1, 3]), shape_flat], [f"attn{i}"])
        o = node("MatMul", [attn, init(a + "o_proj.weight", sd[a + "o_proj.weight"].T)], [f"o{i}"])
        w_post = init(p + "post_attention_layernorm.weight", sd[p + "post_attention_layernorm.weight"])
        h2, _, _, residual = node("SkipSimplifiedLayerNormalization", [o, residual, w_post],
                                  [f"h2_{i}", "", "", f"res{i}b"], domain="com.microsoft", epsilon=eps)
        m = p + "mlp."
        g = node("MatMul", [h2, init(m + "gate_proj.weight", sd[m + "gate_proj.weight"].T)], [f"gate{i}"])
        u = node("MatMul", [h2, init(m + "up_proj.weight", sd[m + "up_proj.weight"].T)], [f"up{i}"])
        s = node("Sigmoid", [g], [f"sig{i}"])
        act = node("Mul", [node("Mul", [g, s], [f"silu{i}"]), u], [f"act{i}"])
        pending = node("MatMul", [act, init(m + "down_proj.weight", sd[m + "down_proj.weight"].T)], [f"down{i}"])

    normed, _, _, _ = node("SkipSimplifiedLayerNormalization", [pending, residual, init("model.norm.weight", sd["model.norm.weight"])],
                           ["normed", "", "", "final_residual"], domain="com.microsoft", epsilon=eps)
    # the last num_logits_to_keep positions (0: all)
    positive = node("Greater", ["num_logits_to_keep", "zero_i64"], ["keep_positive"])
    keep = node("Where", [positive, "num_logits_to_keep", seq], ["keep"])
    start = node("Unsqueeze", [node("Sub", [seq, keep], ["start"]), "axis0"], ["starts"])
    init("ends", np.array([np.iinfo(np.int64).max], dtype=np.int64))
    kept = node("Slice", [normed, start, "ends", "axis1"], ["kept_hidden"])
    lm = sd["lm_head.weight"] if "lm_head.weight" in sd else sd["model.embed_tokens.weight"]
    node("MatMul", [kept, init("lm_head.weight", lm.T)], ["logits"])

    graph = helper.make_graph(nodes, "ghostline-llama-fused", inputs, outputs, inits)
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                                   producer_name="ghostline export_fused.py")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    onnx.save(onnx_model, path)


def main():
    from export_onnx import check_with_node, load_checkpoint
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True, help="model.onnx to write")
    ap.add_argument("--check", action="store_true", help="compare with torch in onnxruntime-node")
    a = ap.parse_args()
    model = load_checkpoint(a.checkpoint)
    build_fused(model, a.out)
    print(f"wrote {a.out}: {len(onnx.load(a.out).graph.node)} nodes")
    if a.check:
        print("max abs diff", check_with_node(model, a.out))


if __name__ == "__main__":
    main()
