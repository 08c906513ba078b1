// What happens when the GPU is not there or goes away, on any machine: these run on the CPU (no SwiftShader
// needed). A lost device is simulated by a real CPU session that says it is a GPU and throws as onnxruntime
// does when Dawn loses its device; the engine must give the same answer as on the CPU, say so once, and keep
// the cache it had. A machine with no adapter is made real with VK_ICD_FILENAMES pointing at nothing.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { readModelFolder } from '../../src/engine/model/modelFolder';
import { OnnxCausalLM } from '../../src/engine/model/onnxModel';
import { describeDevice, type DeviceReport } from '../../src/engine/shared/device';
import { GpuError } from '../../src/engine/shared/errors';
import { chooseDevice, comparison, fasterDevice, GPU_MARGIN, gpuOpenFailure } from '../../src/engine/worker/deviceChoice';
import { DeviceModel } from '../../src/engine/worker/deviceModel';
import {
  DeviceVerdicts,
  failureExpiry,
  failureHolds,
  GPU_FAILURE_KEPT_DAYS,
  GPU_PATH_REVISION,
  verdictKey,
  type DeviceVerdict,
} from '../../src/engine/worker/deviceVerdicts';
import { Engine } from '../../src/engine/worker/engine';
import { ROOT, TINY } from '../helpers';

// Before any WebGPU session opens in this process: the Vulkan loader finds no driver, Dawn no adapter.
process.env.VK_ICD_FILENAMES = path.join(os.tmpdir(), 'ghostline-no-such-icd.json');
process.env.XDG_RUNTIME_DIR ??= os.tmpdir();

const BUNDLED = defaultModelDir(ROOT);
const PROMPT = 'def fibonacci(n):\n    if n < 2:\n        return n\n    return ';
const DEVICE_LOST = 'Device lost: the GPU was removed or its driver crashed (simulated)';

/** A real CPU session that reports itself as a GPU and fails every forward pass after the first `healthy`. */
async function failingGpu(healthy: number): Promise<{ model: OnnxCausalLM; calls: () => number; released: () => boolean }> {
  const folder = readModelFolder(BUNDLED);
  const real = await OnnxCausalLM.load(folder.onnxPath, folder.config, { device: 'cpu', threads: 1 });
  let calls = 0;
  let released = false;
  const model = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'device') return 'gpu';
      if (prop === 'forward') {
        return (...args: Parameters<OnnxCausalLM['forward']>) => {
          calls++;
          if (calls > healthy) return Promise.reject(new GpuError(DEVICE_LOST));
          return target.forward(...args);
        };
      }
      if (prop === 'release') {
        released = true;
        return () => Promise.reject(new GpuError('the lost device cannot be released'));
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { model, calls: () => calls, released: () => released };
}

const gpuReport = (): DeviceReport => ({ setting: 'gpu', device: 'gpu', gpuApi: 'Vulkan', reason: 'the device is set to gpu' });

describe('a GPU lost in the middle of a generation', () => {
  test('the engine moves to the CPU, answers what the CPU answers, says so once, and keeps its cache', async () => {
    const cpuEngine = await Engine.load(BUNDLED, { device: 'cpu', threads: 1 });
    const expected = await cpuEngine.generate(PROMPT, { temperature: 0, maxNewTokens: 12 });
    const expectedNext = await cpuEngine.generate(`${PROMPT}fib`, { temperature: 0, maxNewTokens: 12 });
    await cpuEngine.dispose();

    // Healthy for the prefill (one chunk) and three decode steps, then lost mid-generation.
    const gpu = await failingGpu(4);
    const told: DeviceReport[] = [];
    const engine = await Engine.load(
      BUNDLED,
      { device: 'gpu', threads: 1 },
      { onDeviceChange: (r) => told.push({ ...r }), chooseDevice: async () => ({ model: gpu.model, report: gpuReport(), warmed: true }) },
    );
    assert.equal(engine.info.device.device, 'gpu');
    const got = await engine.generate(PROMPT, { temperature: 0, maxNewTokens: 12 });
    assert.ok(gpu.calls() > 4, 'the simulated loss happened during the generation');
    assert.deepEqual(got.tokens, expected.tokens, 'the request that met the failure gets the CPU answer');
    assert.equal(got.text, expected.text);
    assert.equal(told.length, 1, 'one message');
    assert.equal(told[0].device, 'cpu');
    assert.match(told[0].fellBack ?? '', /the GPU failed \(.*Device lost.*\); the model runs on the CPU for the rest of this session/);
    assert.equal(engine.info.device.device, 'cpu', 'Show Stats reads the CPU');
    assert.match(describeDevice(engine.info.device), /^CPU: the GPU failed/);
    assert.ok(gpu.released(), 'the lost session is let go (its failing release is swallowed)');

    // The next keystroke reuses the cache the GPU and the CPU filled together, and no second message comes.
    const next = await engine.generate(`${PROMPT}fib`, { temperature: 0, maxNewTokens: 12 });
    assert.deepEqual(next.tokens, expectedNext.tokens);
    assert.ok(next.stats.reusedTokens > 0, 'the cache survived the move');
    assert.equal(next.stats.reusedTokens, expectedNext.stats.reusedTokens);
    assert.equal(told.length, 1);
    await engine.dispose();
  });

  test("a device lost inside a run while it holds the cache's copy: the host's copy finishes the request", async () => {
    // A lean graph (the host's copy written row by row into its store) and an export (the host's copy appended
    // from the rows the run returned).
    for (const dir of [BUNDLED, TINY]) {
      const cpuEngine = await Engine.load(dir, { device: 'cpu', threads: 1 });
      const expected = await cpuEngine.generate(PROMPT, { temperature: 0, maxNewTokens: 12 });
      await cpuEngine.dispose();
      // The graph that keeps the cache's copy (on the CPU here, in memory), its session failing from the 5th run
      // on, inside forward: after the copy served the decode steps before.
      const folder = readModelFolder(dir);
      const real = await OnnxCausalLM.load(folder.onnxPath, folder.config, { device: 'cpu', threads: 1, deviceCache: true });
      const session = (real as unknown as { session: { run: (...a: unknown[]) => Promise<unknown> } }).session;
      const run = session.run.bind(session);
      let runs = 0;
      session.run = (...a: unknown[]) => (++runs > 4 ? Promise.reject(new GpuError(DEVICE_LOST)) : run(...a));
      const gpu = new Proxy(real, { get: (t, p, r) => (p === 'device' ? 'gpu' : Reflect.get(t, p, r)) });
      const told: DeviceReport[] = [];
      const engine = await Engine.load(
        dir,
        { device: 'gpu', threads: 1 },
        { onDeviceChange: (r) => told.push({ ...r }), chooseDevice: async () => ({ model: gpu, report: gpuReport(), warmed: true }) },
      );
      const got = await engine.generate(PROMPT, { temperature: 0, maxNewTokens: 12 });
      assert.ok(runs > 4, `${dir}: the loss happened during the generation`);
      assert.ok((real.deviceCacheStats?.kept ?? 0) >= 3, `${dir}: the copy served the decode steps before the loss`);
      assert.deepEqual(got.tokens, expected.tokens, dir);
      assert.equal(told.length, 1);
      await engine.dispose();
    }
  });

  test('a lost device in the first pass (the prefill) still answers', async () => {
    const gpu = await failingGpu(0);
    const told: DeviceReport[] = [];
    const engine = await Engine.load(
      BUNDLED,
      { device: 'gpu', threads: 1 },
      { onDeviceChange: (r) => told.push(r), chooseDevice: async () => ({ model: gpu.model, report: gpuReport(), warmed: true }) },
    );
    const cpuEngine = await Engine.load(BUNDLED, { device: 'cpu', threads: 1 });
    const expected = await cpuEngine.generate(PROMPT, { temperature: 0, maxNewTokens: 8 });
    await cpuEngine.dispose();
    const got = await engine.generate(PROMPT, { temperature: 0, maxNewTokens: 8 });
    assert.equal(got.text, expected.text);
    assert.equal(told.length, 1);
    await engine.dispose();
  });

  test('a GPU opened without a first run is warmed up at load: one that fails there moves to the CPU before any request', async () => {
    const healthy = await failingGpu(Infinity);
    const logged: string[] = [];
    const warmed = await Engine.load(
      BUNDLED,
      { device: 'gpu', threads: 1 },
      { log: (l) => logged.push(l), chooseDevice: async () => ({ model: healthy.model, report: gpuReport() }) },
    );
    assert.equal(healthy.calls(), 2, 'a prefill and a decode step at load, none before');
    assert.match(logged.join('\n'), /GPU warm-up \(shader compilation\) at load: \d+ ms/);
    assert.equal(warmed.info.device.device, 'gpu');
    // The fake's release always fails, as a lost device's does.
    await warmed.dispose().catch(() => undefined);

    const lost = await failingGpu(0);
    const told: DeviceReport[] = [];
    const engine = await Engine.load(
      BUNDLED,
      { device: 'gpu', threads: 1 },
      { onDeviceChange: (r) => told.push({ ...r }), chooseDevice: async () => ({ model: lost.model, report: gpuReport() }) },
    );
    assert.equal(told.length, 1, 'told at load');
    assert.equal(engine.info.device.device, 'cpu');
    const cpuEngine = await Engine.load(BUNDLED, { device: 'cpu', threads: 1 });
    const expected = await cpuEngine.generate(PROMPT, { temperature: 0, maxNewTokens: 8 });
    await cpuEngine.dispose();
    assert.equal((await engine.generate(PROMPT, { temperature: 0, maxNewTokens: 8 })).text, expected.text);
    assert.equal(told.length, 1, 'and only then');
    await engine.dispose();
  });

  test('a failure on the CPU is not a device failure: it reaches the caller unchanged', async () => {
    const folder = readModelFolder(BUNDLED);
    const cpu = await OnnxCausalLM.load(folder.onnxPath, folder.config, { device: 'cpu', threads: 1 });
    const broken = new Proxy(cpu, {
      get: (t, p, r) => (p === 'forward' ? () => Promise.reject(new Error('out of range')) : Reflect.get(t, p, r)),
    });
    let opened = 0;
    const model = new DeviceModel(broken, { setting: 'cpu', device: 'cpu', reason: 'x' }, async () => {
      opened++;
      return cpu;
    });
    await assert.rejects(model.forward([[1, 2]], cpu.emptyCache()), /out of range/);
    assert.equal(opened, 0);
    await cpu.release();
  });
});

describe('no GPU adapter (VK_ICD_FILENAMES points at nothing)', {
  skip: process.platform !== 'linux' && 'Vulkan ICD selection is a Linux loader feature',
}, () => {
  const verdictFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-verdicts-')), 'device.json');

  for (const setting of ['gpu', 'auto'] as const) {
    test(`${setting}: the CPU, with one sentence that says why; nothing remembered`, async () => {
      const file = verdictFile();
      const logs: string[] = [];
      const engine = await Engine.load(BUNDLED, { device: setting, threads: 1, deviceVerdictFile: file }, { log: (l) => logs.push(l) });
      const d = engine.info.device;
      assert.equal(d.device, 'cpu');
      assert.equal(d.setting, setting);
      if (process.arch === 'x64') {
        assert.equal(
          d.reason,
          'no usable GPU: the graphics driver offers no Vulkan adapter (Linux needs the Vulkan loader, libvulkan1, and a Vulkan driver for the GPU)',
        );
        assert.ok(
          logs.some((l) => /could not be opened: .*adapter/i.test(l)),
          "onnxruntime's own words go to the log",
        );
      } else {
        assert.match(d.reason, /no WebGPU provider/);
      }
      const r = await engine.generate(PROMPT, { temperature: 0, maxNewTokens: 4 });
      assert.ok(r.tokens.length > 0, 'and the CPU answers');
      await engine.dispose();
      assert.equal(fs.existsSync(file), false, 'a failed open is not a verdict: a driver installed later is found');
    });
  }

  test('cpu never opens the GPU', async () => {
    const engine = await Engine.load(BUNDLED, { device: 'cpu', threads: 1 });
    assert.deepEqual(engine.info.device, { setting: 'cpu', device: 'cpu', reason: 'the device is set to cpu' });
    await engine.dispose();
  });

  test('a GPU that was measured faster but cannot be opened now: the CPU, and the verdict stays', async () => {
    const file = verdictFile();
    const folder = readModelFolder(BUNDLED);
    const { env } = await import('onnxruntime-node');
    const key = verdictKey(folder.onnxPath, env.versions?.node ?? env.versions?.common ?? 'unknown');
    new DeviceVerdicts(file).set(key, verdict('gpu'));
    const engine = await chooseDevice(folder.onnxPath, folder.config, { device: 'auto', threads: 1, contextLength: 512, deviceVerdictFile: file });
    if (process.arch === 'x64') {
      assert.equal(engine.report.device, 'cpu');
      assert.match(engine.report.reason, /^the GPU measured faster earlier cannot be opened now: no usable GPU/);
    }
    assert.equal(new DeviceVerdicts(file).get(key)?.device, 'gpu');
    await engine.model.release();
  });

  test(`a GPU failure keeps the model on the CPU for ${GPU_FAILURE_KEPT_DAYS} days, then it is measured again`, async () => {
    const folder = readModelFolder(BUNDLED);
    const { env } = await import('onnxruntime-node');
    const key = verdictKey(folder.onnxPath, env.versions?.node ?? env.versions?.common ?? 'unknown');
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    const choose = async (failedAt: string) => {
      const file = verdictFile();
      new DeviceVerdicts(file).set(key, { device: 'cpu', gpuFailed: 'device lost', at: failedAt });
      const choice = await chooseDevice(folder.onnxPath, folder.config, { device: 'auto', threads: 1, contextLength: 512, deviceVerdictFile: file });
      await choice.model.release();
      return choice.report;
    };
    const recent = await choose(daysAgo(GPU_FAILURE_KEPT_DAYS - 1));
    assert.equal(recent.device, 'cpu');
    if (process.arch === 'x64') {
      const retry = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      assert.match(
        recent.reason,
        new RegExp(
          `^the GPU failed on this model when measured on .* \\(device lost\\); it is measured again from ${retry}, or now with Measure Devices Again$`,
        ),
      );
      // Past its days: measured again, which here finds no adapter (not the remembered failure).
      const old = await choose(daysAgo(GPU_FAILURE_KEPT_DAYS + 1));
      assert.equal(old.device, 'cpu');
      assert.match(old.reason, /^no usable GPU/);
    }
  });

  test('a remembered GPU failure holds until its expiry; an unreadable date does not hold', () => {
    const failure = { device: 'cpu' as const, gpuFailed: 'x', at: '2026-12-01T10:00:00.000Z' };
    assert.equal(failureExpiry(failure).toISOString(), `2026-12-${String(1 + GPU_FAILURE_KEPT_DAYS).padStart(2, '0')}T10:00:00.000Z`);
    assert.equal(failureHolds(failure, Date.parse('2026-12-01T10:00:00.000Z')), true);
    assert.equal(failureHolds(failure, failureExpiry(failure).getTime() - 1), true);
    assert.equal(failureHolds(failure, failureExpiry(failure).getTime()), false);
    assert.equal(failureHolds({ ...failure, at: 'yesterday' }), false);
  });

  test('a verdict measured under an older GPU path is not used: the devices are measured again', async () => {
    const file = verdictFile();
    const folder = readModelFolder(BUNDLED);
    const { env } = await import('onnxruntime-node');
    const ort = env.versions?.node ?? env.versions?.common ?? 'unknown';
    new DeviceVerdicts(file).set(verdictKey(folder.onnxPath, ort, GPU_PATH_REVISION - 1), verdict('cpu'));
    const engine = await chooseDevice(folder.onnxPath, folder.config, { device: 'auto', threads: 1, contextLength: 512, deviceVerdictFile: file });
    assert.equal(engine.report.device, 'cpu');
    // Not "measured on 2026-12-01": the old verdict is ignored, and this machine's missing adapter is the reason.
    assert.doesNotMatch(engine.report.reason, /^measured on/);
    if (process.arch === 'x64') assert.match(engine.report.reason, /^no usable GPU/);
    await engine.model.release();
  });
});

function verdict(device: 'cpu' | 'gpu', at = '2026-12-01T10:00:00.000Z'): DeviceVerdict {
  return {
    device,
    cpu: { prefillMsPerToken: 1, decodeMsPerToken: 10, firstRunMs: 50 },
    gpu: { prefillMsPerToken: 0.2, decodeMsPerToken: 4, firstRunMs: 900 },
    prefillTokens: 128,
    decodeTokens: 16,
    at,
  };
}

describe('the verdict and its store', () => {
  test('the GPU is kept only with the margin: a tie, or a small win, is the CPU', () => {
    const cpu = { prefillMsPerToken: 1, decodeMsPerToken: 10, firstRunMs: 0 };
    const scaled = (f: number) => ({ prefillMsPerToken: f, decodeMsPerToken: 10 * f, firstRunMs: 0 });
    assert.equal(fasterDevice(cpu, scaled(1), 128, 16), 'cpu');
    assert.equal(fasterDevice(cpu, scaled(1 / (GPU_MARGIN * 0.99)), 128, 16), 'cpu');
    assert.equal(fasterDevice(cpu, scaled(1 / (GPU_MARGIN * 1.01)), 128, 16), 'gpu');
    // Prefill-heavy against decode-heavy: the whole workload decides, not one phase.
    assert.equal(fasterDevice(cpu, { prefillMsPerToken: 0.1, decodeMsPerToken: 11, firstRunMs: 0 }, 128, 16), 'gpu');
    assert.equal(fasterDevice(cpu, { prefillMsPerToken: 0.9, decodeMsPerToken: 30, firstRunMs: 0 }, 128, 16), 'cpu');
  });

  test('the comparison names the winner and both devices numbers', () => {
    assert.equal(
      comparison(verdict('gpu')),
      'GPU 3.2x faster than the CPU (prefill 0.20 against 1.00 ms/token, decode 4.00 against 10.0 ms/token, GPU first run 900 ms)',
    );
    const slowGpu = { ...verdict('cpu'), gpu: { prefillMsPerToken: 2, decodeMsPerToken: 30, firstRunMs: 13000 } };
    assert.match(comparison(slowGpu), /^CPU 2\.6x faster than the GPU/);
  });

  test("onnxruntime's adapter failure reads as one sentence; other failures keep their words", () => {
    const dawn = new GpuError('the GPU could not run it: ... Failed to get a WebGPU adapter: No supported adapters');
    assert.equal(gpuOpenFailure(dawn, 'Metal'), 'no usable GPU: the graphics driver offers no Metal adapter');
    assert.match(gpuOpenFailure(dawn, 'Vulkan'), /libvulkan1/);
    assert.equal(gpuOpenFailure(new Error('out of memory'), 'Direct3D 12'), 'no usable GPU: out of memory');
  });

  test('a verdict is remembered per model file: a changed file, or another onnxruntime, measures again', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-verdict-key-'));
    const onnx = path.join(dir, 'model.onnx');
    fs.writeFileSync(onnx, 'first');
    const a = verdictKey(onnx, '1.30.0');
    assert.equal(verdictKey(onnx, '1.30.0'), a, 'stable');
    assert.notEqual(verdictKey(onnx, '1.31.0'), a);
    assert.notEqual(verdictKey(onnx, '1.30.0', GPU_PATH_REVISION - 1), a, 'a verdict from an older GPU path');
    fs.writeFileSync(onnx, 'second, longer');
    assert.notEqual(verdictKey(onnx, '1.30.0'), a);
    assert.match(a, new RegExp(`${process.platform}-${process.arch}`));
    assert.ok(a.endsWith(`OS ${os.release()}`), 'an OS update (which brings GPU drivers on macOS) measures again');
  });

  test('a damaged or foreign store reads as empty and is rewritten whole; the oldest go past 64', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-verdicts-')), 'sub', 'device.json');
    const store = new DeviceVerdicts(file);
    assert.equal(store.get('k'), null, 'missing file');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    for (const junk of ['{"version":1,"verdi', '[]', '{"version":2,"verdicts":{"k":{}}}', '\u0000\u0001']) {
      fs.writeFileSync(file, junk);
      assert.equal(store.get('k'), null, `reads ${JSON.stringify(junk)} as empty`);
    }
    store.set('k', verdict('cpu', '2025-06-01T00:00:00.000Z'));
    assert.equal(store.get('k')?.device, 'cpu');
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).version, 1);
    for (let i = 0; i < 70; i++) store.set(`m${i}`, verdict('gpu', new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString()));
    const kept = Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')).verdicts);
    assert.equal(kept.length, 64);
    assert.ok(kept.includes('m69') && !kept.includes('m0') && !kept.includes('k'), 'the oldest measurements went first');
    assert.deepEqual(
      fs.readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
  });
});
