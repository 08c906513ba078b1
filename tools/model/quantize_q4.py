"""4-bit weight-only quantization (com.microsoft MatMulNBits) of an exported fp32 decoder, symmetric by default.

Reuses tools/model/quantize.py (the graph rewrite: every MatMul whose second input is a constant 2-D [K, N]
weight becomes MatMulNBits, and the embedding Gather gets an int8 table) and adds what it lacks:

  - symmetric 4-bit blocks (the default here): per block of 32 along K, scale = (signed absmax) / -8 and
    code = clip(round(w / scale), -8, 7) + 8 (the MLAS convention), packed two codes per byte, low nibble
    first, into B uint8 [N, K/32, 16], with scales float32 [N * K/32] and NO zero_points input (the op's
    default zero point for 4 bits is 8). `--asymmetric` keeps quantize.py's min/max blocks with zero points;
  - inputs whose weights live in external data files (onnx.load reads them next to the model), and an
    output that is written with external data when it would not fit in one protobuf (2 GB);
  - `--compare-with fp32.onnx`: runs both models in onnxruntime-node on the same prompt and prints the
    cosine similarity of their logits (all positions) and the top-1 agreement.

usage: /usr/bin/python3 -m tools.model.quantize_q4 in.onnx out.onnx [--block 32] [--asymmetric]
           [--accuracy-level 0|1|2|3|4] [--no-embed-int8] [--compare-with in.onnx]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import REPO
from . import quantize as q8
PROTO_LIMIT = 2 ** 31 - 2 ** 24  # stay clear of protobuf's 2 GB limit
SYM_ZP_BYTE = 0x88  # two 4-bit zero points of 8: what a symmetric block's packed zero point looks like


def quantize_blocks_sym4(w_nk: np.ndarray, bits: int, block: int):
    """Symmetric 4-bit blocks. Same signature and returns as quantize.quantize_blocks (w_nk [N, K] ->
    packed [N, k_blocks, block/2], scales [N*k_blocks], packed zero points (all 8: dropped afterwards),
    dequantized [N, K])."""
    if bits != 4:
        raise ValueError("symmetric mode is 4-bit only")
    N, K = w_nk.shape
    kb = (K + block - 1) // block
    w = np.pad(w_nk.astype(np.float32), ((0, 0), (0, kb * block - K))).reshape(N, kb, block)
    idx = np.abs(w).argmax(-1)
    vmax = np.take_along_axis(w, idx[..., None], -1)[..., 0]  # the value of largest magnitude, with its sign
    scale = (vmax / -8.0).astype(np.float32)
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    q = (np.clip(np.round(w / scale[..., None]), -8, 7) + 8).astype(np.uint8)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)  # low nibble = even k
    zp_packed = np.full(N * ((kb + 1) // 2), SYM_ZP_BYTE, dtype=np.uint8)
    deq = ((q.astype(np.float32) - 8.0) * scale[..., None]).reshape(N, kb * block)[:, :K]
    return packed, scale.reshape(-1), zp_packed, deq


@contextlib.contextmanager
def _patched(obj, name, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def _initializer_bytes(m: onnx.ModelProto) -> int:
    return sum(len(i.raw_data) if i.raw_data else numpy_helper.to_array(i).nbytes for i in m.graph.initializer)


def save_model_auto(m: onnx.ModelProto, path: str, external: str = "auto") -> None:
    """Inline when it fits in one protobuf (or external == 'never'), else weights in `<file>_data` next to it."""
    data_name = os.path.basename(path) + "_data"
    data_path = os.path.join(os.path.dirname(os.path.abspath(path)), data_name)
    if os.path.exists(data_path):
        os.remove(data_path)  # save_model appends to an existing data file
    if external == "always" or (external == "auto" and _initializer_bytes(m) > PROTO_LIMIT):
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=data_name, size_threshold=1024)
    else:
        onnx.save_model(m, path)


def quantize_q4(src: str, dst: str, block: int = 32, symmetric: bool = True, accuracy_level: int = 0,
                embed_int8: bool = True, external: str = "auto") -> dict:
    t0 = time.time()
    tmp_dir = tempfile.mkdtemp(prefix="ghostline-q4-", dir=os.path.dirname(os.path.abspath(dst)))
    tmp = os.path.join(tmp_dir, "stage1.onnx")
    try:
        with contextlib.ExitStack() as st:
            if symmetric:
                st.enter_context(_patched(q8, "quantize_blocks", quantize_blocks_sym4))
            # quantize.py writes its result inline with onnx.save: a 4-bit model of up to ~1.5B parameters fits
            st.enter_context(_patched(onnx, "save", lambda m, p: save_model_auto(m, p, "auto")))
            if not embed_int8:
                stats = _quantize_without_gather(src, tmp, block, accuracy_level)
            else:
                stats = q8.quantize_model(src, tmp, bits=4, block=block, accuracy_level=accuracy_level)
        m = onnx.load(tmp)
        inits = {i.name: i for i in m.graph.initializer}
        dropped = set()
        if symmetric:
            for n in m.graph.node:
                if n.op_type == "MatMulNBits" and len(n.input) == 4 and n.input[3] in inits:
                    zp = numpy_helper.to_array(inits[n.input[3]])
                    if np.all(zp == SYM_ZP_BYTE):
                        dropped.add(n.input[3])
                        del n.input[3]
            used = {x for n in m.graph.node for x in n.input}
            keep = [i for i in m.graph.initializer if i.name not in dropped or i.name in used]
            del m.graph.initializer[:]
            m.graph.initializer.extend(keep)
        for n in m.graph.node:
            if n.op_type == "MatMulNBits":
                a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
                assert a["bits"] == 4 and a["block_size"] == block, a
        save_model_auto(m, dst, external)
    finally:
        for f in os.listdir(tmp_dir):
            os.remove(os.path.join(tmp_dir, f))
        os.rmdir(tmp_dir)
    stats.pop("bytes", None)
    stats.update({"symmetric": symmetric, "zero_points_dropped": len(dropped), "block": block,
                  "accuracy_level": accuracy_level, "seconds": round(time.time() - t0, 1),
                  "bytes": os.path.getsize(dst) + (os.path.getsize(dst + "_data")
                                                   if os.path.exists(dst + "_data") else 0)})
    return stats


def _quantize_without_gather(src, dst, block, accuracy_level):
    """quantize.py with the embedding table left in fp32 (its Gather branch skipped)."""
    m = onnx.load(src)
    for n in m.graph.node:  # quantize.py rewrites only op_type "Gather": hide the embedding lookups from it
        if n.op_type == "Gather":
            n.op_type = "GatherKeepFp32"
    tmp_src = dst + ".src.onnx"
    save_model_auto(m, tmp_src, "always")
    del m
    try:
        stats = q8.quantize_model(tmp_src, dst, bits=4, block=block, accuracy_level=accuracy_level)
    finally:
        os.remove(tmp_src)
        os.remove(tmp_src + "_data")
    m = onnx.load(dst)
    for n in m.graph.node:
        if n.op_type == "GatherKeepFp32":
            n.op_type = "Gather"
    save_model_auto(m, dst, "auto")
    return stats


# ---------------------------------------------------------------- fp32 vs q4 in onnxruntime-node

_COMPARE_JS = r"""
const path = require('path');
const ort = require(path.join(process.argv[1], 'node_modules/onnxruntime-node'));
const [, , a, b, seqS, seedS, threadsS] = process.argv;
const seq = +seqS, threads = +threadsS;
async function run(file) {
  const t0 = Date.now();
  const s = await ort.InferenceSession.create(file, {graphOptimizationLevel: 'all', intraOpNumThreads: threads});
  const loadMs = Date.now() - t0;
  const meta = s.inputMetadata || [];
  const shape = (n) => { const m = Array.isArray(meta) ? meta.find((x) => x.name === n) : meta[n]; return m && m.shape; };
  let x = +seedS || 1;
  const rnd = () => { x = (x * 1103515245 + 12345) % 2147483648; return x; };
  const vocabGuess = +process.env.GL_VOCAB;
  const ids = new BigInt64Array(seq); for (let i = 0; i < seq; i++) ids[i] = BigInt(rnd() % vocabGuess);
  const feeds = {input_ids: new ort.Tensor('int64', ids, [1, seq]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(seq).fill(1n), [1, seq]),
    position_ids: new ort.Tensor('int64', BigInt64Array.from({length: seq}, (_, i) => BigInt(i)), [1, seq])};
  for (const n of s.inputNames) {
    if (n.startsWith('past_key_values.')) {
      const sh = shape(n); const kvh = sh[1], hd = sh[3];
      feeds[n] = new ort.Tensor('float32', new Float32Array(0), [1, kvh, 0, hd]);
    }
    if (n === 'num_logits_to_keep') feeds[n] = new ort.Tensor('int64', BigInt64Array.of(0n), []);
  }
  const t1 = Date.now();
  const out = await s.run(feeds);
  const runMs = Date.now() - t1;
  return {logits: out.logits.data, dims: out.logits.dims, loadMs, runMs};
}
(async () => {
  const A = await run(a); const B = await run(b);
  const V = A.dims[2]; const rows = A.dims[1];
  let dot = 0, na = 0, nb = 0, agree = 0, maxAbs = 0;
  const per = [];
  for (let r = 0; r < rows; r++) {
    let d = 0, x2 = 0, y2 = 0, ia = 0, ib = 0;
    for (let i = 0; i < V; i++) {
      const u = A.logits[r * V + i], v = B.logits[r * V + i];
      d += u * v; x2 += u * u; y2 += v * v; maxAbs = Math.max(maxAbs, Math.abs(u - v));
      if (u > A.logits[r * V + ia]) ia = i; if (v > B.logits[r * V + ib]) ib = i;
    }
    dot += d; na += x2; nb += y2; per.push(d / Math.sqrt(x2 * y2)); if (ia === ib) agree++;
  }
  console.log(JSON.stringify({cosine: dot / Math.sqrt(na * nb), min_row_cosine: Math.min(...per),
    top1_agreement: agree / rows, positions: rows, vocab: V, max_abs_diff: maxAbs,
    fp32_std: Math.sqrt(na / (rows * V)), load_ms: [A.loadMs, B.loadMs], prefill_ms: [A.runMs, B.runMs]}));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def compare_in_node(ref: str, quant: str, seq: int = 16, seed: int = 1, threads: int = 2,
                    vocab: int | None = None) -> dict:
    """Cosine similarity of the logits of two models (same contract) on one random prompt, all positions."""
    if vocab is None:
        cfg = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(ref))), "config.json")
        vocab = json.load(open(cfg))["vocab_size"] if os.path.exists(cfg) else 256
    env = dict(os.environ, GL_VOCAB=str(vocab))
    r = subprocess.run(["node", "-e", _COMPARE_JS, REPO, ref, quant, str(seq), str(seed), str(threads)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit("compare failed:\n" + r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--block", type=int, default=32)
    ap.add_argument("--asymmetric", action="store_true", help="min/max blocks with zero points (quantize.py)")
    ap.add_argument("--accuracy-level", type=int, default=0,
                    help="MatMulNBits accuracy_level (4: int8 activations, usually faster on CPU)")
    ap.add_argument("--no-embed-int8", action="store_true", help="keep the embedding table fp32")
    ap.add_argument("--external", choices=["auto", "always", "never"], default="auto")
    ap.add_argument("--compare-with", help="fp32 model: print cosine similarity of logits vs the output")
    a = ap.parse_args()
    print(json.dumps(quantize_q4(a.src, a.dst, a.block, not a.asymmetric, a.accuracy_level,
                                 not a.no_embed_int8, a.external)))
    if a.compare_with:
        print(json.dumps(compare_in_node(a.compare_with, a.dst)))


if __name__ == "__main__":
    main()
