// Greedy completion with the shipped tokenizer + ONNX model (what the engine does, minus its extras).
// usage: node tools/model/greedy.cjs <model_dir> <onnx file name> <max_new_tokens> <prompt> [<prompt>...]
//   a prompt containing "<CURSOR>" is run as FIM in Ghostline's layout:
//   <fim_prefix>lines above<fim_suffix>rest of the line and lines below<fim_middle>cursor line up to the cursor
const fs = require('fs');
const path = require('path');
const ort = require(path.resolve(__dirname, '../../node_modules/onnxruntime-node'));
const { Tokenizer } = require(path.resolve(__dirname, '../../node_modules/@huggingface/tokenizers'));

(async () => {
  const [dir, onnxName, maxNewS, ...prompts] = process.argv.slice(2);
  const tok = new Tokenizer(JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')),
    JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')));
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const s = await ort.InferenceSession.create(path.join(dir, 'onnx', onnxName), { graphOptimizationLevel: 'all', intraOpNumThreads: 1 });
  const L = cfg.num_hidden_layers, kvh = cfg.num_key_value_heads, hd = cfg.head_dim;
  const eos = new Set([].concat(cfg.eos_token_id));
  const results = [];
  for (const p0 of prompts) {
    let p = p0;
    if (p0.includes('<CURSOR>')) {
      const [before, after] = p0.split('<CURSOR>');
      const lineStart = before.lastIndexOf('\n') + 1;
      p = `<fim_prefix>${before.slice(0, lineStart)}<fim_suffix>${after}<fim_middle>${before.slice(lineStart)}`;
    }
    let ids = tok.encode(p, { add_special_tokens: false }).ids;
    let past = null, pastLen = 0;
    const gen = [];
    for (let step = 0; step < Number(maxNewS); step++) {
      const t = ids.length;
      const f = {
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, t]),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(pastLen + t).fill(1n), [1, pastLen + t]),
        position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: t }, (_, i) => BigInt(pastLen + i)), [1, t]),
        num_logits_to_keep: new ort.Tensor('int64', BigInt64Array.from([1n]), []),
      };
      for (let i = 0; i < L; i++) {
        for (const kind of ['key', 'value']) {
          f[`past_key_values.${i}.${kind}`] = past ? past[`present.${i}.${kind}`] : new ort.Tensor('float32', new Float32Array(0), [1, kvh, 0, hd]);
        }
      }
      const out = await s.run(f);
      const lg = out.logits.data;
      let best = 0;
      for (let v = 1; v < lg.length; v++) if (lg[v] > lg[best]) best = v;
      past = out; pastLen += t;
      if (eos.has(best)) break;
      gen.push(best);
      ids = [best];
    }
    results.push({ prompt: p0, completion: gen.length ? tok.decode(gen, { skip_special_tokens: false }) : '' });
  }
  console.log(JSON.stringify(results, null, 1));
})().catch((e) => { console.error(e); process.exit(1); });
