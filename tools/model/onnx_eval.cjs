// Validation loss of an exported decoder in onnxruntime-node, plus a rough speed measurement.
// usage: node tools/model/onnx_eval.cjs <model.onnx> <rows.bin> <n_rows> <row_len>
//   rows.bin: int64 little-endian token ids, n_rows x row_len; loss = mean NLL of tokens 1..row_len-1.
// prints one JSON line: {nll, tokens, prefill_ms_200, decode_ms_per_token}
const fs = require('fs');
const path = require('path');
const ort = require(path.resolve(__dirname, '../../node_modules/onnxruntime-node'));

(async () => {
  const [modelPath, rowsPath, nRowsS, rowLenS, threadsS] = process.argv.slice(2);
  const nRows = Number(nRowsS), rowLen = Number(rowLenS);
  const s = await ort.InferenceSession.create(modelPath, {
    graphOptimizationLevel: 'all', intraOpNumThreads: Number(threadsS || 2), executionMode: 'sequential',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const layers = s.inputNames.filter((n) => n.endsWith('.key')).length;
  const meta = JSON.parse(fs.readFileSync(path.join(path.dirname(modelPath), '..', 'config.json'), 'utf8'));
  const kvh = meta.num_key_value_heads, hd = meta.head_dim;
  const buf = fs.readFileSync(rowsPath);
  const all = new BigInt64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const empty = (b) => new ort.Tensor('float32', new Float32Array(0), [b, kvh, 0, hd]);
  function feeds(ids, b, t, past, pastLen, keep) {
    const f = {
      input_ids: new ort.Tensor('int64', ids, [b, t]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(b * (pastLen + t)).fill(1n), [b, pastLen + t]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: b * t }, (_, i) => BigInt(pastLen + (i % t))), [b, t]),
      num_logits_to_keep: new ort.Tensor('int64', BigInt64Array.from([BigInt(keep)]), []),
    };
    for (let i = 0; i < layers; i++) {
      f[`past_key_values.${i}.key`] = past ? past[`present.${i}.key`] : empty(b);
      f[`past_key_values.${i}.value`] = past ? past[`present.${i}.value`] : empty(b);
    }
    return f;
  }
  let nll = 0, count = 0;
  const T = rowLen - 1;
  for (let r = 0; r < nRows; r++) {
    const row = all.subarray(r * rowLen, (r + 1) * rowLen);
    const out = await s.run(feeds(row.slice(0, T), 1, T, null, 0, 0));
    const V = out.logits.dims[2];
    const lg = out.logits.data;
    for (let i = 0; i < T; i++) {
      let mx = -Infinity;
      for (let v = 0; v < V; v++) mx = Math.max(mx, lg[i * V + v]);
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(lg[i * V + v] - mx);
      nll += Math.log(z) + mx - lg[i * V + Number(row[i + 1])];
      count++;
    }
  }
  // speed: prefill 200 tokens (keep 1) then 32 decode steps
  const ids = all.slice(0, 200);
  let t0 = performance.now();
  let out;
  for (let k = 0; k < 3; k++) out = await s.run(feeds(ids, 1, 200, null, 0, 1));
  const prefill = (performance.now() - t0) / 3;
  let past = out, len = 200;
  t0 = performance.now();
  for (let k = 0; k < 32; k++) {
    past = await s.run(feeds(BigInt64Array.from([1n]), 1, 1, past, len, 1));
    len++;
  }
  const decode = (performance.now() - t0) / 32;
  console.log(JSON.stringify({ nll: nll / count, tokens: count, prefill_ms_200: +prefill.toFixed(2), decode_ms_per_token: +decode.toFixed(3) }));
})().catch((e) => { console.error(e); process.exit(1); });
