// Run an exported model with onnxruntime-node on cases written by export_onnx.py and compare with torch.
// usage: node tools/model/check_onnx.cjs <model.onnx> <cases_dir>
const fs = require('fs');
const path = require('path');
const ort = require(path.resolve(__dirname, '../../node_modules/onnxruntime-node'));

function load(dir, spec) {
  const buf = fs.readFileSync(path.join(dir, spec.file));
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const data = spec.dtype === 'int64' ? new BigInt64Array(ab) : new Float32Array(ab);
  return new ort.Tensor(spec.dtype, data, spec.dims);
}

(async () => {
  const [modelPath, dir] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(modelPath, {
    graphOptimizationLevel: 'all', intraOpNumThreads: 1,
  });
  const cases = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'));
  let worst = 0;
  for (const c of cases) {
    const feeds = {};
    for (const [k, spec] of Object.entries(c.inputs)) feeds[k] = load(dir, spec);
    const out = await session.run(feeds);
    let caseWorst = 0;
    for (const [k, spec] of Object.entries(c.outputs)) {
      const want = load(dir, spec);
      const got = out[k];
      if (JSON.stringify(got.dims) !== JSON.stringify(want.dims)) {
        throw new Error(`${c.name} ${k}: dims ${got.dims} != ${want.dims}`);
      }
      for (let i = 0; i < want.data.length; i++) {
        const d = Math.abs(got.data[i] - want.data[i]);
        if (!(d <= caseWorst)) caseWorst = Number.isNaN(d) ? Infinity : Math.max(caseWorst, d);
      }
    }
    console.log(`${c.name}: max abs diff ${caseWorst.toExponential(2)}`);
    worst = Math.max(worst, caseWorst);
  }
  console.log(JSON.stringify({ max_abs_diff: worst, inputs: session.inputNames, outputs: session.outputNames }));
})().catch((e) => { console.error(e); process.exit(1); });
