import { formatBytes } from '../hub/format';
import { convertCheckpoint } from '../converter/convert';
import type { Quant } from '../converter/types';
import { checkKnown, num, one, type ParsedArgs } from './args';
import { onCancel } from '../platform/cancelSignals';

/**
 * `ghostline convert --from DIR --out DIR [--quant q4|int8|fp32] [--block-size 32] [--accuracy-level 4] [--head-bits 4|8] [--progress-json]`.
 * Progress goes to stderr (a bar) or, with --progress-json, one JSON line per update on stdout (for the
 * extension, which runs the conversion in a child process so the editor never waits on it).
 */
export async function convertCommand(args: ParsedArgs): Promise<number> {
  checkKnown(args, 'convert', ['from', 'out', 'quant', 'block-size', 'accuracy-level', 'head-bits'], ['progress-json']);
  const from = one(args, 'from');
  const out = one(args, 'out');
  if (!from || !out) throw new Error('convert needs --from CHECKPOINT_DIR and --out MODEL_DIR');
  const json = args.flags.has('progress-json');
  const ac = new AbortController();
  onCancel(() => ac.abort()); // signals differ by platform: see cancelSignals.ts
  let lastPct = -1;
  const result = await convertCheckpoint({
    from,
    out,
    quant: one(args, 'quant') as Quant | undefined,
    blockSize: num(args, 'block-size'),
    accuracyLevel: num(args, 'accuracy-level'),
    headBits: num(args, 'head-bits') as 4 | 8 | undefined,
    signal: ac.signal,
    onProgress: (p) => {
      const pct = Math.floor((100 * p.doneBytes) / Math.max(1, p.totalBytes));
      if (pct === lastPct) return;
      lastPct = pct;
      if (json) process.stdout.write(`${JSON.stringify({ progress: p })}\n`);
      else process.stderr.write(`\rconverting ${pct}% ${p.tensor.padEnd(48).slice(0, 48)}`);
    },
  }).catch((err: unknown) => {
    if (lastPct >= 0 && !json) process.stderr.write('\n'); // end the progress line before the error
    throw err;
  });
  if (json) process.stdout.write(`${JSON.stringify({ result })}\n`);
  else process.stderr.write(`\nwrote ${result.out} (${formatBytes(result.bytes)}, ${result.modelType}, ${result.quant}) in ${result.seconds.toFixed(1)} s\n`);
  return 0;
}
