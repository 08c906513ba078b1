// Validation loss of an exported decoder in onnxruntime-node, plus a rough speed measurement.
// usage: node tools/model/onnx_eval.cjs <model.onnx> <rows.bin> <n_rows> <row_len> [threads]
//   <model.onnx> lies in <model folder>/onnx/ (config.json is read from the folder); either decoder contract
//   (the converter's lean one or Hugging Face's): it runs through the engine's OnnxCausalLM, so build the
//   sources first (npx tsc -p .: out/src/engine/model/onnxModel.js).
//   rows.bin: int64 little-endian token ids, n_rows x row_len; loss = mean NLL of tokens 1..row_len-1.
// prints one JSON line: {nll, tokens, prefill_ms_200, decode_ms_per_token}
const fs = require('fs');
const path = require('path');

const engine = path.resolve(__dirname, '../../out/src/engine/model/onnxModel.js');
if (!fs.existsSync(engine)) {
  console.error(`${engine} not found: run npx tsc -p . first`);
  process.exit(1);
}
const { OnnxCausalLM } = require(engine);

(async () => {
  const [modelPath, rowsPath, nRowsS, rowLenS, threadsS] = process.argv.slice(2);
  const nRows = Number(nRowsS), rowLen = Number(rowLenS);
  const config = JSON.parse(fs.readFileSync(path.join(path.dirname(modelPath), '..', 'config.json'), 'utf8'));
  const model = await OnnxCausalLM.load(modelPath, config, { threads: Number(threadsS || 2) });
  const buf = fs.readFileSync(rowsPath);
  const all = new BigInt64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  if (all.length < nRows * rowLen) throw new Error(`${rowsPath} holds ${all.length} ids, not ${nRows} x ${rowLen}`);
  const ids = (a) => Array.from(a, Number);
  let nll = 0, count = 0;
  const T = rowLen - 1;
  for (let r = 0; r < nRows; r++) {
    const row = ids(all.subarray(r * rowLen, (r + 1) * rowLen));
    // keep T: logits of all T positions (forward returns the last `keep` rows)
    const out = await model.forward([row.slice(0, T)], model.emptyCache(), T);
    if (out.rows !== T) throw new Error(`asked for ${T} rows of logits, got ${out.rows}`);
    const lg = out.logits;
    const V = lg.length / T;
    for (let i = 0; i < T; i++) {
      let mx = -Infinity;
      for (let v = 0; v < V; v++) mx = Math.max(mx, lg[i * V + v]);
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(lg[i * V + v] - mx);
      nll += Math.log(z) + mx - lg[i * V + row[i + 1]];
      count++;
    }
  }
  // speed: prefill 200 tokens (keep 1) then 32 decode steps
  const prompt = ids(all.subarray(0, 200));
  let t0 = performance.now();
  let out;
  for (let k = 0; k < 3; k++) out = await model.forward([prompt], model.emptyCache(), 1);
  const prefill = (performance.now() - t0) / 3;
  let cache = out.cache;
  t0 = performance.now();
  for (let k = 0; k < 32; k++) cache = (await model.forward([[1]], cache, 1)).cache;
  const decode = (performance.now() - t0) / 32;
  await model.release();
  console.log(JSON.stringify({ nll: nll / count, tokens: count, prefill_ms_200: +prefill.toFixed(2), decode_ms_per_token: +decode.toFixed(3) }));
})().catch((e) => { console.error(e); process.exit(1); });
