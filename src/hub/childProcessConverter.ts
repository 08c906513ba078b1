import { fork } from 'node:child_process';
import { CANCEL_MESSAGE } from '../platform/cancelSignals';
import type { ConvertOptions, ConvertProgress, ConvertResult } from '../converter/types';
import type { Converter } from './installCheckpoint';

/**
 * The converter in a child process: `node <cli> convert --from --out --progress-json` (src/cli/convertCommand.ts).
 * The conversion is CPU work of seconds to minutes; in the extension host it would freeze the editor, the
 * progress notification and its Cancel button. Progress comes back as JSON lines on stdout; a cancel asks the
 * converter to stop (it stops at the next layer and removes its `<out>.converting` folder), then kills it if it
 * is still running 5 s later (installCheckpoint converts inside a scratch folder it removes anyway).
 * Asking differs by platform: SIGTERM on Linux and macOS; on Windows `kill('SIGTERM')` is TerminateProcess,
 * a hard kill with no cleanup, so the request goes as an IPC message there (src/platform/cancelSignals.ts).
 * No `vscode` import.
 */

export class ConverterProcessError extends Error {
  override readonly name = 'ConverterProcessError';
}

/** The last meaningful line the CLI wrote to stderr, without its `ghostline: ` prefix. */
function lastError(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('converting '));
  return lines.length ? lines[lines.length - 1].replace(/^ghostline:\s*/, '') : undefined;
}

/** A Converter that runs `cliPath` (dist/cli.js in the extension) with the current node/Electron binary. */
export function childProcessConverter(cliPath: string, platform: NodeJS.Platform = process.platform): Converter {
  return (o: ConvertOptions) =>
    new Promise<ConvertResult>((resolve, reject) => {
      if (o.signal?.aborted) return reject(new ConverterProcessError('conversion cancelled'));
      const args = ['convert', '--from', o.from, '--out', o.out, '--progress-json'];
      if (o.quant) args.push('--quant', o.quant);
      if (o.blockSize !== undefined) args.push('--block-size', String(o.blockSize));
      if (o.accuracyLevel !== undefined) args.push('--accuracy-level', String(o.accuracyLevel));
      // ELECTRON_RUN_AS_NODE: in VS Code, process.execPath is Electron (as for the engine's worker).
      const child = fork(cliPath, args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, execArgv: [] });
      let result: ConvertResult | undefined;
      let pending = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        let nl: number;
        for (nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          if (!line) continue;
          let msg: { progress?: ConvertProgress; result?: ConvertResult };
          try {
            msg = JSON.parse(line);
          } catch {
            continue; // not one of ours
          }
          if (msg.progress) o.onProgress?.(msg.progress);
          if (msg.result) result = msg.result;
        }
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8000)));
      const onAbort = () => {
        if (platform === 'win32' && child.connected) child.send(CANCEL_MESSAGE, () => undefined);
        else child.kill('SIGTERM');
        setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), 5000).unref();
      };
      o.signal?.addEventListener('abort', onAbort, { once: true });
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        o.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(result!);
      };
      child.once('error', (e) => settle(new ConverterProcessError(`cannot start the converter (${cliPath}): ${e.message}`)));
      child.once('close', (code, signal) => {
        if (o.signal?.aborted) return settle(new ConverterProcessError('conversion cancelled'));
        if (code === 0 && result) return settle();
        settle(new ConverterProcessError(lastError(stderr) ?? `the converter exited with ${code ?? signal} and no result`));
      });
    });
}
