// `npm run bench:device [-- --models default,0.5b,1.5b,export --gpu-models ... --threads T --out device.json]`: the local
// model on each device onnxruntime-node can open here (the CPU, and the GPU through WebGPU). Per model and
// device: load and first-run time, prefill and decode tokens/s on the workload `auto` measures, decode at 1,500
// tokens of context, the bytes copied per decode step (on the GPU with the KV cache kept there and, for the
// before and after, uploaded on every run), the first request after a GPU load without and with the load's
// warm-up, the nodes the GPU provider left to the CPU, and what `auto` keeps (the same rule on the same workload). The Qwen2.5-Coder 0.5B/1.5B shapes are random-weight
// checkpoints converted to q4 (bench/qwenPath.ts); `export` (not run unless named) is the tiny torch.onnx fixture,
// a Hugging Face export, whose cache is kept on the GPU too (exportCacheGraph.ts). On SwiftShader (a Vulkan on the CPU) only the default model
// goes to the GPU unless --gpu-models says otherwise: it proves the path, not the speed. Writes
// bench/results/device.json.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { contextLength } from '../src/engine/model/folderAgreement';
import { readModelFolder } from '../src/engine/model/modelFolder';
import { defaultModelDir, packageRoot } from '../src/engine/host/defaultModel';
import type { DeviceTiming } from '../src/engine/shared/device';
import { errorMessage } from '../src/engine/shared/errors';
import { comparison, fasterDevice, gpuOpenFailure, gpuSupport } from '../src/engine/worker/deviceChoice';
import { type DeviceRow, failedRow, firstRequest, gpuPlacement, measureDevice, type Placement, WORKLOAD } from './device';
import { ensureConvertedShape, type QwenShapeName } from './qwenPath';

const MODELS = ['default', '0.5b', '1.5b', 'export'] as const;
type ModelName = (typeof MODELS)[number];

interface ModelResult {
  model: ModelName;
  contextLength: number;
  rows: DeviceRow[];
  gpuPlacement?: Placement;
  auto?: { device: 'cpu' | 'gpu'; why: string };
  gpuSkipped?: string;
}

function listArg(value: string | undefined, fallback: readonly ModelName[]): ModelName[] {
  return value === undefined ? [...fallback] : value.split(',').filter((m): m is ModelName => (MODELS as readonly string[]).includes(m));
}

function timing(r: DeviceRow): DeviceTiming {
  return { prefillMsPerToken: r.prefillMsPerToken, decodeMsPerToken: r.decodeMsPerToken, firstRunMs: r.firstRunMs };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
  const root = packageRoot(__dirname);
  const threads = arg('threads') ? Number(arg('threads')) : undefined;
  const swiftShader = /swiftshader/i.test(process.env.VK_ICD_FILENAMES ?? '');
  const models = listArg(arg('models'), ['default', '0.5b', '1.5b']);
  const gpuModels = listArg(arg('gpu-models'), swiftShader ? ['default'] : MODELS);
  const support = gpuSupport();
  const log = (s: string) => console.error(`[bench:device] ${s}`);
  log(`GPU: ${'api' in support ? `WebGPU on ${support.api}${swiftShader ? ' (SwiftShader, a Vulkan on the CPU)' : ''}` : support.missing}`);

  const results: ModelResult[] = [];
  for (const name of models) {
    const dir =
      name === 'default'
        ? defaultModelDir(root)
        : name === 'export'
          ? path.join(root, 'test', 'fixtures', 'tiny-llama')
          : ensureConvertedShape(root, log, name as QwenShapeName).converted;
    const folder = readModelFolder(dir);
    const ctx = contextLength(folder.config);
    const result: ModelResult = { model: name, contextLength: ctx, rows: [] };
    log(`${name}: the CPU`);
    result.rows.push(await measureDevice(name, folder.onnxPath, folder.config, 'cpu', ctx, threads).catch((e) => failedRow(name, 'cpu', e)));
    if (!('api' in support)) result.gpuSkipped = support.missing;
    else if (!gpuModels.includes(name)) result.gpuSkipped = swiftShader ? 'SwiftShader: only --gpu-models run on it' : 'not in --gpu-models';
    else {
      log(`${name}: the GPU (node placement, then timing)`);
      result.gpuPlacement = gpuPlacement(root, folder.onnxPath);
      const row = await measureDevice(name, folder.onnxPath, folder.config, 'gpu', ctx).catch((e) =>
        failedRow(name, 'gpu', new Error(gpuOpenFailure(e, support.api))),
      );
      result.rows.push(row);
      if (!row.error) {
        log(`${name}: the first request after a load on the GPU, without and with the warm-up`);
        row.firstRequest = await firstRequest(folder.onnxPath, folder.config);
      }
      // The same device with the cache uploaded on every run, as before it stayed there: the before and after.
      if (row.cacheOnDevice === true) {
        log(`${name}: the GPU again, the cache uploaded on every run`);
        result.rows.push(
          await measureDevice(name, folder.onnxPath, folder.config, 'gpu', ctx, undefined, false).catch((e) => failedRow(name, 'gpu', e, 'turned off')),
        );
      }
      const cpu = result.rows[0];
      if (!row.error && !cpu.error) {
        const pre = Math.max(8, Math.min(WORKLOAD.prefillTokens, Math.floor(ctx / 4)));
        const v = { cpu: timing(cpu), gpu: timing(row), prefillTokens: pre, decodeTokens: WORKLOAD.decodeTokens };
        result.auto = { device: fasterDevice(v.cpu, v.gpu, pre, WORKLOAD.decodeTokens), why: comparison(v) };
      } else result.auto = { device: 'cpu', why: row.error ?? 'the CPU row failed' };
    }
    for (const r of result.rows)
      log(
        `${name} ${r.device}${r.cacheOnDevice === undefined ? '' : r.cacheOnDevice === true ? ' (cache kept)' : ` (cache uploaded: ${r.cacheOnDevice})`}: ` +
          (r.error ??
            `prefill ${r.prefillTokensPerS} tok/s, decode ${r.decodeTokensPerS} tok/s, first run ${r.firstRunMs} ms; ` +
              r.copy.map((c) => `${c.context} ctx: ${c.cacheUploadBytes} B up/step, ${c.decodeMsPerToken} ms/token`).join('; ') +
              (r.firstRequest
                ? `; first request ${r.firstRequest.coldMs} ms cold, ${r.firstRequest.warmedMs} ms after a ${r.firstRequest.warmUpMs} ms warm-up (then ${r.firstRequest.againMs} ms)`
                : '')),
      );
    if (result.auto) log(`${name}: auto keeps the ${result.auto.device.toUpperCase()}: ${result.auto.why}`);
    results.push(result);
  }
  const out = {
    command: `npm run bench:device -- ${argv.join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', platform: `${process.platform}-${process.arch}` },
    gpu: 'api' in support ? { api: support.api, swiftShader } : { missing: support.missing },
    workload: WORKLOAD,
    results,
  };
  const file = path.join(root, 'bench', 'results', path.basename(arg('out') ?? 'device.json'));
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  log(`wrote ${path.relative(root, file)}`);
}

main().catch((err: unknown) => {
  console.error(`bench:device: ${errorMessage(err)}`);
  process.exit(1);
});
