// npm run eval:quant-loss [-- --model DIR]: what int8 and q4 weights cost in loss against fp32 (quantLoss.ts),
// written to bench/results/quant-loss.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import { flagValue } from './machine';
import { quantLoss } from './quantLoss';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const dir = flagValue(argv, 'model') ?? defaultModelDir();
  const result = { command: `npm run eval:quant-loss -- ${argv.join(' ')}`.trim(), date: new Date().toISOString(), ...(await quantLoss(dir)) };
  const json = `${JSON.stringify(result, null, 2)}\n`;
  fs.writeFileSync(path.join(packageRoot(__dirname), 'bench', 'results', 'quant-loss.json'), json);
  process.stdout.write(json);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
