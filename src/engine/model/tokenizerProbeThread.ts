/**
 * The thread of tokenizerProbe.ts: builds the folder's tokenizer, encodes and decodes each probe text, saying which one
 * it starts, so that the thread that waits can name the text a stalled tokenizer is stuck on. Bundled as
 * dist/tokenizerProbeThread.js (esbuild.js).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { TextTokenizer } from './tokenizer';
import type { ProbeMessage } from './tokenizerProbe';

function readObject(file: string, required: boolean): object {
  if (!required && !fs.existsSync(file)) return {};
  const value: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${path.basename(file)} must hold a JSON object`);
  return value;
}

function run(dir: string, texts: string[], post: (m: ProbeMessage) => void): void {
  try {
    const tokenizer = new TextTokenizer(readObject(path.join(dir, 'tokenizer.json'), true), readObject(path.join(dir, 'tokenizer_config.json'), false));
    texts.forEach((text, index) => {
      post({ type: 'start', index });
      // Decoded too: a decoder's Replace patterns are regular expressions as well (streaming text, server healing).
      tokenizer.decode(tokenizer.encodeLiteral(text));
    });
    post({ type: 'done' });
  } catch (err) {
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
}

if (parentPort) {
  const port = parentPort;
  const data = workerData as { dir: string; texts: string[] };
  run(data.dir, data.texts, (m) => port.postMessage(m));
}
