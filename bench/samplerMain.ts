// npm run bench:sampler: what the sampler chain costs per token on a Qwen-sized vocabulary (151,936 logits),
// for the greedy chain and the inline and generate presets' defaults. JavaScript only (no model): the time
// between two model steps that sampling adds. Writes bench/results/sampler.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SamplerChain } from '../src/engine/decode/samplers/chain';
import { Prng } from '../src/engine/decode/samplers/prng';
import { resolveDecodeOptions } from '../src/engine/shared/decodeOptions';
import { presetDefaults } from '../src/completion/presetTable';
import { cpuFlags } from './machine';
import { median, round } from './stats';

const VOCAB = 151_936;
const ROWS = 8;
const ROUNDS = 7;
const PER_ROUND = 500;

/** Logit rows shaped like a language model's: a broad bulk and a handful of likely tokens. */
function logitRows(): Float32Array[] {
  const rng = new Prng(7);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  return Array.from({ length: ROWS }, () => {
    const row = Float32Array.from({ length: VOCAB }, () => 2.5 * gauss());
    for (let i = 0; i < 6; i++) row[Math.floor(rng.next() * VOCAB)] += 8 + 4 * rng.next();
    return row;
  });
}

function main() {
  const rows = logitRows();
  const history = Array.from({ length: 256 }, (_, i) => (i * 7919) % VOCAB);
  const chains = {
    greedy: resolveDecodeOptions({ temperature: 0 }),
    inline: resolveDecodeOptions(presetDefaults('inline')),
    generate: resolveDecodeOptions(presetDefaults('generate')),
  };
  const results: Record<string, unknown> = {};
  for (const [name, opts] of Object.entries(chains)) {
    const chain = new SamplerChain(opts);
    const rng = new Prng(1);
    let sink = 0;
    for (let i = 0; i < 200; i++) sink += chain.sample(rows[i % ROWS], { history, rng });
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      for (let i = 0; i < PER_ROUND; i++) sink += chain.sample(rows[i % ROWS], { history, rng });
      rounds.push(((performance.now() - t0) * 1000) / PER_ROUND);
    }
    results[name] = {
      chain: chain.describe(),
      us_per_token_median: round(median(rounds), 1),
      us_per_token_rounds: rounds.map((x) => round(x, 1)),
      sink: sink % 97, // keeps the work observable
    };
    console.log(`${name.padEnd(8)} ${round(median(rounds), 1)} us/token (rounds ${rounds.map((x) => x.toFixed(0)).join(', ')})  ${chain.describe()}`);
  }
  const out = {
    command: 'npm run bench:sampler',
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model.trim(), instruction_set: cpuFlags(), node: process.version },
    vocab: VOCAB,
    results,
  };
  const file = path.join(__dirname, '..', '..', 'bench', 'results', 'sampler.json');
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}

main();
