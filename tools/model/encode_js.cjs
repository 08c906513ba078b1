// Encode texts with @huggingface/tokenizers (the library the engine uses), for cross-checking bpe.py.
// usage: node tools/model/encode_js.cjs <model_dir> <texts.json>   -> prints JSON list of id lists
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.resolve(__dirname, '../../node_modules/@huggingface/tokenizers'));
const dir = process.argv[2];
const tj = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
const tc = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
const tok = new Tokenizer(tj, tc);
const texts = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const out = texts.map((t) => {
  const ids = tok.encode(t, { add_special_tokens: false }).ids;
  const back = ids.length ? tok.decode(ids, { skip_special_tokens: false }) : '';
  return { ids, roundtrip: back === t };
});
process.stdout.write(JSON.stringify(out));
