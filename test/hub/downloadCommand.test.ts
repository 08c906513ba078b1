import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import type { ConvertOptions, ConvertResult } from '../../src/converter/types';
import { ROOT } from '../helpers';
import { startForwardProxy } from '../net/forwardProxy';
import { closedPort, fakeCheckpointFiles, fakeModelFiles, startFakeHub, type FakeHub } from './fakeHub';

/**
 * The Download Model command against the fake hub, with a scripted stand-in for the `vscode` module
 * (only the calls the command makes). The real extension host is covered by the integration suite.
 */

interface Call {
  fn: string;
  args: unknown[];
}

const calls: Call[] = [];
const settings = new Map<string, unknown>();
const secrets = new Map<string, string>();
let quickPick: (items: { label: string; repo?: string; custom?: boolean; detail?: string }[]) => unknown;
let inputBox: (opts: { validateInput?: (v: string) => string | undefined }) => string | undefined;
/** The answer to an information prompt: the first of these that starts one of its buttons. */
let infoAnswer: string | string[] | undefined;
let errorAnswer: string | undefined;
const progressMessages: string[] = [];
const registered = new Map<string, (...a: unknown[]) => unknown>();

const fakeVscode = {
  QuickPickItemKind: { Separator: -1, Default: 0 },
  ProgressLocation: { Notification: 15 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  Disposable: { from: (...d: unknown[]) => ({ dispose: () => d }) },
  Uri: { parse: (s: string) => ({ toString: () => s }) },
  env: {
    openExternal: async (u: unknown) => {
      calls.push({ fn: 'openExternal', args: [u] });
      return true;
    },
  },
  commands: {
    registerCommand: (id: string, fn: (...a: unknown[]) => unknown) => {
      registered.set(id, fn);
      return { dispose() {} };
    },
    executeCommand: async (id: string, ...args: unknown[]) => {
      calls.push({ fn: 'executeCommand', args: [id, ...args] });
      return undefined;
    },
  },
  workspace: {
    getConfiguration: (section: string) => ({
      get: (k: string) => settings.get(`${section}.${k}`),
      inspect: (k: string) => ({ key: `${section}.${k}`, globalValue: settings.get(`${section}.${k}`) }),
      update: async (k: string, v: unknown, target: number) => {
        calls.push({ fn: 'update', args: [`${section}.${k}`, v, target] });
        if (v === undefined) settings.delete(`${section}.${k}`);
        else settings.set(`${section}.${k}`, v);
      },
    }),
  },
  window: {
    showQuickPick: async (items: { label: string }[]) => {
      calls.push({ fn: 'showQuickPick', args: [items] });
      return quickPick(items);
    },
    showInputBox: async (opts: { validateInput?: (v: string) => string | undefined }) => {
      calls.push({ fn: 'showInputBox', args: [opts] });
      return inputBox(opts);
    },
    showInformationMessage: async (msg: string, ...items: string[]) => {
      calls.push({ fn: 'info', args: [msg, ...items] });
      const answers = infoAnswer === undefined ? [] : Array.isArray(infoAnswer) ? infoAnswer : [infoAnswer];
      for (const a of answers) {
        const item = items.find((i) => i.startsWith(a));
        if (item) return item;
      }
      return undefined;
    },
    showWarningMessage: async (msg: string) => {
      calls.push({ fn: 'warn', args: [msg] });
      return undefined;
    },
    showErrorMessage: async (msg: string, ...items: string[]) => {
      calls.push({ fn: 'error', args: [msg, ...items] });
      return items.length ? errorAnswer : undefined;
    },
    withProgress: async <T>(opts: { cancellable: boolean }, task: (p: { report(v: { message?: string }): void }, t: unknown) => Promise<T>) => {
      assert.equal(opts.cancellable, true);
      const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };
      return task({ report: (v) => v.message && progressMessages.push(v.message) }, token);
    },
  },
};

const M = Module as unknown as { _load: (req: string, parent: unknown, isMain: boolean) => unknown };
const originalLoad = M._load;
M._load = function (req: string, parent: unknown, isMain: boolean) {
  if (req === 'vscode') return fakeVscode;
  return originalLoad.call(this, req, parent, isMain);
};
const cmd: typeof import('../../src/vscode/downloadModel') = require('../../src/vscode/downloadModel');
const hubAccess: typeof import('../../src/vscode/hubAccess') = require('../../src/vscode/hubAccess');

const QWEN = 'onnx-community/Qwen2.5-Coder-0.5B-Instruct';
const QWEN_BASE = 'Qwen/Qwen2.5-Coder-0.5B';
const DEEPSEEK_BASE = 'deepseek-ai/deepseek-coder-1.3b-base';
const SWEEP_SMALL = 'sweepai/sweep-next-edit-0.5B';

/** Stands in for src/converter/convert.ts: a config and an ONNX file in `out`, with progress. */
const converted: ConvertOptions[] = [];
async function fakeConvert(o: ConvertOptions): Promise<ConvertResult> {
  converted.push(o);
  fs.mkdirSync(path.join(o.out, 'onnx'), { recursive: true });
  fs.copyFileSync(path.join(o.from, 'config.json'), path.join(o.out, 'config.json'));
  fs.copyFileSync(path.join(o.from, 'tokenizer.json'), path.join(o.out, 'tokenizer.json'));
  o.onProgress?.({ doneBytes: 1, totalBytes: 2, tensor: 'model.embed_tokens.weight' });
  fs.writeFileSync(path.join(o.out, 'onnx', 'model_q4.onnx'), Buffer.alloc(4000, 1));
  o.onProgress?.({ doneBytes: 2, totalBytes: 2, tensor: 'lm_head.weight' });
  return { out: o.out, onnxFile: path.join(o.out, 'onnx', 'model_q4.onnx'), bytes: 4000, seconds: 0.01, modelType: 'qwen2', quant: 'q4' };
}
const log = { info() {}, warn() {}, error() {}, debug() {} } as unknown as import('vscode').LogOutputChannel;
let hub: FakeHub;
let storage: string;
let context: import('vscode').ExtensionContext;

before(async () => {
  hub = await startFakeHub({
    [QWEN]: { files: fakeModelFiles(120_000, 3) },
    'acme/tiny-coder': { files: { ...fakeModelFiles(60_000, 4), 'README.md': Buffer.from('# hi'), 'onnx/model_fp16.onnx': Buffer.alloc(2000) } },
    'acme/gated': { files: fakeModelFiles(10_000, 5), token: 'hf_ok' },
    'acme/no-onnx': { files: { 'config.json': Buffer.from('{}'), 'tokenizer.json': Buffer.from('{}'), 'model.safetensors': Buffer.alloc(10) } },
    [QWEN_BASE]: { files: fakeCheckpointFiles({ floats: 30_000 }) },
    [DEEPSEEK_BASE]: { files: { ...fakeModelFiles(1000, 6), 'pytorch_model.bin': Buffer.alloc(3000) } },
    // A real (tiny) qwen2 GGUF under the name the recommended entry downloads.
    // A GGUF-only repo (as the hub's *-GGUF repos are): no ONNX export, several quantizations.
    'acme/coder-gguf': {
      files: {
        'README.md': Buffer.from('# card'),
        'coder-q4_k_m.gguf': Buffer.alloc(500, 3),
        'coder-q8_0.gguf': fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'gguf', 'qwen2-q8_0.gguf')),
      },
    },
    [SWEEP_SMALL]: { files: { 'sweep-next-edit-0.5b.q8_0.gguf': fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'gguf', 'qwen2-q8_0.gguf')) } },
  });
});
after(() => {
  M._load = originalLoad;
  return hub.close();
});
beforeEach(() => {
  storage = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-cmd-'));
  context = {
    globalStorageUri: { fsPath: storage },
    secrets: {
      get: async (k: string) => secrets.get(k),
      store: async (k: string, v: string) => void secrets.set(k, v),
      delete: async (k: string) => void secrets.delete(k),
    },
  } as unknown as import('vscode').ExtensionContext;
  calls.length = 0;
  converted.length = 0;
  progressMessages.length = 0;
  settings.clear();
  secrets.clear();
  settings.set('ghostline.hub.endpoint', hub.endpoint);
  infoAnswer = undefined;
  errorAnswer = undefined;
});

test('registers ghostline.downloadModel and ghostline.setHubToken', () => {
  cmd.registerModelCommands(context, { log });
  assert.ok(registered.has('ghostline.downloadModel'));
  assert.ok(registered.has('ghostline.setHubToken'));
});

test('a recommended model: picked, downloaded with progress, then switched to', async () => {
  quickPick = (items) => {
    assert.ok(
      items.some((i) => i.custom),
      'offers a repo id',
    );
    // The int8 export says where it is picked that a GPU does not run its products; a converted checkpoint does not.
    const detail = (repo: string) => items.find((i) => i.repo === repo)?.detail ?? '';
    assert.match(detail(QWEN), /On a GPU its int8 products still run on the CPU/);
    assert.doesNotMatch(detail('Qwen/Qwen2.5-Coder-0.5B'), /GPU/);
    assert.doesNotMatch(detail('HuggingFaceTB/SmolLM2-135M-Instruct'), /GPU/, 'a q4 export runs on the GPU');
    return items.find((i) => i.repo === QWEN);
  };
  infoAnswer = 'Use Model';
  settings.set('ghostline.modelFile', 'model_q4.onnx');
  let switched = '';
  const dir = await cmd.downloadModelCommand(context, { log, onModelSwitched: (d) => (switched = d) });
  assert.ok(dir && fs.existsSync(path.join(dir, 'onnx', 'model_quantized.onnx')));
  assert.equal(switched, dir);
  assert.deepEqual(calls.find((c) => c.fn === 'update' && c.args[0] === 'ghostline.modelPath')?.args, ['ghostline.modelPath', dir, 1]);
  assert.equal(settings.get('ghostline.modelFile'), undefined, 'the old modelFile is cleared');
  assert.ok(
    progressMessages.some((m) => /kB \/ .*kB/.test(m)),
    progressMessages.join('\n'),
  );
  const items = cmd.installedModelItems(context);
  assert.equal(items.length, 1);
  assert.equal(items[0].dir, dir);
  assert.match(items[0].description ?? '', /downloaded, \d+(\.\d)? kB/);
  // The picker now marks it installed.
  quickPick = (list) => {
    const qwen = list.find((i) => i.repo === QWEN) as { description?: string };
    assert.match(qwen.description ?? '', /installed/);
    return undefined;
  };
  assert.equal(await cmd.downloadModelCommand(context, { log }), undefined);
});

test('a typed repo id: validated, its files chosen from the hub listing', async () => {
  quickPick = (items) => items.find((i) => i.custom);
  inputBox = (opts) => {
    assert.match(opts.validateInput!('nope') ?? '', /owner\/name/);
    assert.ok(opts.validateInput!('a/b/c'));
    assert.equal(opts.validateInput!('acme/tiny-coder'), undefined);
    assert.equal(opts.validateInput!('acme/tiny-coder@main'), undefined);
    return 'acme/tiny-coder';
  };
  infoAnswer = 'Not Now';
  const dir = await cmd.downloadModelCommand(context, { log });
  assert.ok(dir);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'onnx')), ['model_quantized.onnx'], 'int8 chosen over fp16');
  assert.ok(!fs.existsSync(path.join(dir, 'README.md')));
  assert.ok(!calls.some((c) => c.fn === 'update'), 'not switched');
});

test("VS Code's http.proxy / http.noProxy reach the download: the listing and the files go through the proxy, a dead proxy is named", async () => {
  const proxy = await startForwardProxy();
  try {
    settings.set('http.proxy', proxy.url);
    const dir = await cmd.downloadModelCommand(context, { log }, { repo: 'acme/tiny-coder', use: false });
    assert.ok(dir && fs.existsSync(path.join(dir, 'onnx', 'model_quantized.onnx')));
    assert.ok(
      proxy.forwarded.some((u) => u.includes('/api/models/acme/tiny-coder/')),
      'the listing',
    );
    assert.ok(
      proxy.forwarded.some((u) => u.startsWith(`${hub.cdnOrigin}/lfs/`)),
      'the CDN',
    );
    const n = proxy.forwarded.length;
    settings.set('http.noProxy', ['127.0.0.1']);
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-cmd-'));
    context = { ...context, globalStorageUri: { fsPath: storage } } as unknown as import('vscode').ExtensionContext;
    assert.ok(await cmd.downloadModelCommand(context, { log }, { repo: 'acme/tiny-coder', use: false }));
    assert.equal(proxy.forwarded.length, n, 'http.noProxy goes direct');
  } finally {
    await proxy.close();
  }
  settings.delete('http.noProxy');
  settings.set('http.proxy', `http://127.0.0.1:${await closedPort()}`);
  assert.equal(await cmd.downloadModelCommand(context, { log }, { repo: 'acme/tiny-coder', use: false }), undefined);
  const errors = calls.filter((c) => c.fn === 'error');
  assert.equal(errors.length, 1);
  assert.match(String(errors[0].args[0]), /Cannot reach the proxy http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\).*http\.proxy/);
});

test('a repo without ONNX export is explained', async () => {
  assert.equal(await cmd.downloadModelCommand(context, { log }, 'acme/no-onnx'), undefined);
  const err = calls.find((c) => c.fn === 'error');
  assert.match(String(err?.args[0]), /needs an ONNX export/);
});

test('a gated repo asks for a token; the stored token (or HF_TOKEN) is then used', async () => {
  errorAnswer = 'Set Token';
  assert.equal(await cmd.downloadModelCommand(context, { log }, { repo: 'acme/gated', use: false }), undefined);
  const err = calls.find((c) => c.fn === 'error')!;
  assert.match(String(err.args[0]), /gated or private/);
  assert.deepEqual(err.args.slice(1), ['Set Token', 'Open Model Page']);
  assert.ok(calls.some((c) => c.fn === 'executeCommand' && c.args[0] === 'ghostline.setHubToken'));
  // The token command stores it in SecretStorage.
  cmd.registerModelCommands(context, { log });
  inputBox = () => 'hf_ok';
  await registered.get('ghostline.setHubToken')!();
  assert.equal(secrets.get(hubAccess.TOKEN_SECRET), 'hf_ok');
  assert.ok(await cmd.downloadModelCommand(context, { log }, { repo: 'acme/gated', use: false }));
  // HF_TOKEN from the environment works too.
  secrets.clear();
  fs.rmSync(path.join(storage, 'models'), { recursive: true });
  process.env.HF_TOKEN = 'hf_ok';
  try {
    assert.ok(await cmd.downloadModelCommand(context, { log }, { repo: 'acme/gated', use: false }));
  } finally {
    delete process.env.HF_TOKEN;
  }
});

test('the endpoint: the user setting, else HF_ENDPOINT, else huggingface.co', () => {
  assert.equal(hubAccess.hubEndpoint(), hub.endpoint);
  settings.delete('ghostline.hub.endpoint');
  const saved = process.env.HF_ENDPOINT;
  process.env.HF_ENDPOINT = 'https://mirror.example';
  try {
    assert.equal(hubAccess.hubEndpoint(), 'https://mirror.example');
    delete process.env.HF_ENDPOINT;
    assert.equal(hubAccess.hubEndpoint(), 'https://huggingface.co');
  } finally {
    if (saved === undefined) delete process.env.HF_ENDPOINT;
    else process.env.HF_ENDPOINT = saved;
  }
});

test('the picker lists the checkpoints first, under their own heading, then the ONNX exports', async () => {
  let seen: { label: string; repo?: string; kind?: number }[] = [];
  quickPick = (items) => {
    seen = items;
    return undefined;
  };
  assert.equal(await cmd.downloadModelCommand(context, { log }), undefined);
  assert.equal(seen[0].kind, -1);
  assert.match(seen[0].label, /checkpoints, converted on this machine/);
  assert.equal(seen[1].repo, QWEN_BASE);
  const nextEditHeading = seen.findIndex((i) => i.kind === -1 && /Next-edit models/.test(i.label));
  const onnxHeading = seen.findIndex((i) => i.kind === -1 && /ONNX/.test(i.label));
  assert.ok(nextEditHeading > 6 && onnxHeading > nextEditHeading, `${nextEditHeading} ${onnxHeading}`);
  assert.deepEqual(
    seen.slice(1, nextEditHeading).map((i) => i.repo),
    ['Qwen/Qwen2.5-Coder-0.5B', 'Qwen/Qwen2.5-Coder-1.5B', 'HuggingFaceTB/SmolLM2-135M', 'HuggingFaceTB/SmolLM2-360M', DEEPSEEK_BASE, 'bigcode/starcoder2-3b'],
  );
  assert.deepEqual(
    seen.slice(nextEditHeading + 1, onnxHeading).map((i) => i.repo),
    [SWEEP_SMALL, 'sweepai/sweep-next-edit-1.5B'],
  );
  assert.equal(seen[onnxHeading + 1].repo, QWEN);
});

test('a checkpoint: downloaded, converted with progress, used, then its checkpoint deleted', async () => {
  quickPick = (items) => items.find((i) => i.repo === QWEN_BASE);
  infoAnswer = ['Use Model', 'Delete checkpoint'];
  const dir = await cmd.downloadModelCommand(context, { log, convert: fakeConvert });
  assert.equal(dir, path.join(storage, 'models', 'Qwen--Qwen2.5-Coder-0.5B'));
  assert.equal(converted.length, 1);
  assert.equal(converted[0].from, path.join(storage, 'checkpoints', 'Qwen--Qwen2.5-Coder-0.5B'));
  assert.ok(
    progressMessages.some((m) => /^Downloading · .*kB \/ .*kB/.test(m)),
    progressMessages.join('\n'),
  );
  assert.ok(progressMessages.includes('Converting · 50% · model.embed_tokens.weight'), progressMessages.join('\n'));
  assert.deepEqual(calls.find((c) => c.fn === 'update' && c.args[0] === 'ghostline.modelPath')?.args, ['ghostline.modelPath', dir, 1]);
  const prompt = calls.find((c) => c.fn === 'info' && String(c.args[1]).startsWith('Delete checkpoint'));
  assert.match(String(prompt?.args[1]), /^Delete checkpoint \(1\d\d\.\d kB\)$/);
  assert.equal(prompt?.args[2], 'Keep');
  assert.ok(!fs.existsSync(path.join(storage, 'checkpoints', 'Qwen--Qwen2.5-Coder-0.5B')), 'checkpoint deleted');
  const items = cmd.installedModelItems(context);
  assert.deepEqual(
    items.map((i) => i.dir),
    [dir],
  );
  assert.match(items[0].description ?? '', /^converted here, /);
});

test('a checkpoint kept on request; asking again reuses the converted model', async () => {
  const dir = await cmd.downloadModelCommand(context, { log, convert: fakeConvert }, { repo: QWEN_BASE, use: false, deleteCheckpoint: false });
  assert.ok(dir);
  assert.ok(fs.existsSync(path.join(storage, 'checkpoints', 'Qwen--Qwen2.5-Coder-0.5B', 'model.safetensors')));
  assert.ok(!calls.some((c) => c.fn === 'info'), 'no prompt when the request says what to do');
  quickPick = (list) => {
    assert.match((list.find((i) => i.repo === QWEN_BASE) as { description?: string }).description ?? '', /installed/);
    return list.find((i) => i.repo === QWEN_BASE);
  };
  infoAnswer = 'Not Now';
  assert.equal(await cmd.downloadModelCommand(context, { log, convert: fakeConvert }), dir);
  assert.equal(converted.length, 1, 'not converted twice');
  assert.match(String(calls.find((c) => c.fn === 'info')?.args[0]), /already converted/);
});

test('a checkpoint repo with only pytorch_model.bin is explained', async () => {
  assert.equal(await cmd.downloadModelCommand(context, { log, convert: fakeConvert }, DEEPSEEK_BASE), undefined);
  assert.match(String(calls.find((c) => c.fn === 'error')?.args[0]), /this repo has no safetensors weights; Ghostline converts only safetensors/);
  assert.equal(converted.length, 0);
  assert.deepEqual(cmd.installedModelItems(context), []);
});

test('a next-edit model: its GGUF downloaded and converted, then set as the next-edit model (not for completions)', async () => {
  const { convertCheckpoint } = await import('../../src/converter/convert');
  quickPick = (items) => items.find((i) => i.repo === SWEEP_SMALL);
  infoAnswer = ['Use for Next Edits', 'Keep'];
  const dir = await cmd.downloadModelCommand(context, { log, convert: convertCheckpoint });
  assert.equal(dir, path.join(storage, 'models', 'sweepai--sweep-next-edit-0.5B'));
  assert.ok(fs.existsSync(path.join(dir!, 'onnx', 'model_q4.onnx')));
  assert.ok(fs.existsSync(path.join(storage, 'checkpoints', 'sweepai--sweep-next-edit-0.5B', 'sweep-next-edit-0.5b.q8_0.gguf')));
  const question = calls.find((c) => c.fn === 'info' && /Use it for next edits\?$/.test(String(c.args[0])));
  assert.ok(question, 'asked about next edits');
  assert.deepEqual(calls.find((c) => c.fn === 'update' && c.args[0] === 'ghostline.nextEdit.modelPath')?.args, ['ghostline.nextEdit.modelPath', dir, 1]);
  assert.deepEqual(calls.find((c) => c.fn === 'update' && c.args[0] === 'ghostline.nextEdit.enable')?.args, ['ghostline.nextEdit.enable', true, 1]);
  assert.ok(!calls.some((c) => c.fn === 'update' && c.args[0] === 'ghostline.modelPath'), 'the completion model is left alone');
});

test('a typed repo with GGUF files and no ONNX export: its Q8_0 file is downloaded, converted here and offered for completions', async () => {
  const { convertCheckpoint } = await import('../../src/converter/convert');
  infoAnswer = ['Use Model', 'Keep'];
  const dir = await cmd.downloadModelCommand(context, { log, convert: convertCheckpoint }, 'acme/coder-gguf');
  assert.equal(dir, path.join(storage, 'models', 'acme--coder-gguf'));
  assert.ok(fs.existsSync(path.join(dir!, 'onnx', 'model_q4.onnx')));
  assert.ok(!hub.log.some((r) => r.url.includes('q4_k_m') || r.url.includes('README')), 'only the Q8_0 file is fetched');
  assert.deepEqual(calls.find((c) => c.fn === 'update' && c.args[0] === 'ghostline.modelPath')?.args, ['ghostline.modelPath', dir, 1]);
});
