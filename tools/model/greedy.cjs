// Greedy completion with the shipped tokenizer + ONNX model (what the engine does, minus its extras).
// usage: node tools/model/greedy.cjs <model_dir> <onnx file name> <max_new_tokens> <prompt> [<prompt>...]
//   a prompt containing "<CURSOR>" is run as FIM in Ghostline's layout:
//   <fim_prefix>lines above<fim_suffix>rest of the line and lines below<fim_middle>cursor line up to the cursor
// Either decoder contract (the converter's lean one or Hugging Face's), through the engine's OnnxCausalLM: build
// the sources first (npx tsc -p .: out/src/engine/model/onnxModel.js).
const fs = require('fs');
const path = require('path');
const { OnnxCausalLM } = require(path.resolve(__dirname, '../../out/src/engine/model/onnxModel.js'));
const { Tokenizer } = require(path.resolve(__dirname, '../../node_modules/@huggingface/tokenizers'));

(async () => {
  const [dir, onnxName, maxNewS, ...prompts] = process.argv.slice(2);
  const tok = new Tokenizer(JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')),
    JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')));
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const model = await OnnxCausalLM.load(path.join(dir, 'onnx', onnxName), cfg, { threads: 1 });
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
    let cache = model.emptyCache();
    const gen = [];
    for (let step = 0; step < Number(maxNewS); step++) {
      const out = await model.forward([ids], cache, 1);
      const lg = out.logits;
      let best = 0;
      for (let v = 1; v < lg.length; v++) if (lg[v] > lg[best]) best = v;
      cache = out.cache;
      if (eos.has(best)) break;
      gen.push(best);
      ids = [best];
    }
    results.push({ prompt: p0, completion: gen.length ? tok.decode(gen, { skip_special_tokens: false }) : '' });
  }
  await model.release();
  console.log(JSON.stringify(results, null, 1));
})().catch((e) => { console.error(e); process.exit(1); });
