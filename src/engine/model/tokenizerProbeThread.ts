/**
 * The thread of tokenizerProbe.ts: builds the folder's tokenizer, encodes and decodes each probe text, saying which one
 * it starts, so that the thread that waits can name the text a stalled tokenizer is stuck on. Bundled as
 * dist/tokenizerProbeThread.js (esbuild.js).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ModelFolderError } from '../shared/errors';
import { readJson } from './modelFolder';
import { TextTokenizer } from './tokenizer';
import type { ProbeMessage } from './tokenizerProbe';

function run(dir: string, texts: string[], post: (m: ProbeMessage) => void): void {
  try {
    const tokenizer = new TextTokenizer(readJson(dir, 'tokenizer.json', true)!, readJson(dir, 'tokenizer_config.json', false) ?? {});
    texts.forEach((text, index) => {
      post({ type: 'start', index });
      // Decoded too: a decoder's Replace patterns are regular expressions as well (streaming text, server healing).
      tokenizer.decode(tokenizer.encodeLiteral(text));
    });
    post({ type: 'done' });
  } catch (err) {
    // A file of the folder that cannot be read names itself; the tokenizer's own errors are named by the caller.
    if (err instanceof ModelFolderError) post({ type: 'error', file: err.file, message: err.detail });
    else post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
}

if (parentPort) {
  const port = parentPort;
  const data = workerData as { dir: string; texts: string[] };
  run(data.dir, data.texts, (m) => port.postMessage(m));
}
