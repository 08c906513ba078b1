// npm run bench [-- --quick] [--model DIR] [--threads N]: writes bench/results/latest.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultModelDir, packageRoot } from '../src/engine/defaultModel';
import { engineBench } from './engineBench';

async function main() {
  const argv = process.argv.slice(2);
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  const root = packageRoot(__dirname);
  const model = arg('model') ?? defaultModelDir(root);
  const threads = Number(arg('threads') ?? 2);
  const source = arg('source') ?? path.join(root, 'src', 'completion', 'completionService.ts');
  const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()}-${os.arch()}`, load: os.loadavg().map((x) => Math.round(x * 100) / 100) };
  console.error(`bench: model ${model}, ${threads} threads, quick=${quick}`);
  const engine = await engineBench(model, source, { threads, quick });
  const results = { date: new Date().toISOString(), command: `npm run bench -- ${argv.join(' ')}`.trim(), machine, engine };
  const out = path.join(root, 'bench', 'results', 'latest.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  console.log(JSON.stringify(results, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
