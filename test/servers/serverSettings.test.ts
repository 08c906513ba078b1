/** The server backend's settings: package.json agrees with the table, and bad values are reported by name. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { guessFimFamily, readServerSettings, SERVER_SETTINGS, serverConfigError, serverTemplate } from '../../src/servers/serverSettings';
import { endpoint } from '../../src/servers/endpoint';
import { ROOT } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const props = pkg.contributes.configuration.properties as Record<string, Record<string, unknown>>;

test('package.json declares every server setting with the same type, default, bounds and text, user level only', () => {
  for (const s of SERVER_SETTINGS) {
    const p = props[`ghostline.${s.setting}`];
    assert.ok(p, `package.json lacks ghostline.${s.setting}`);
    assert.equal(p.type, s.type, s.setting);
    assert.deepEqual(p.default, s.default, s.setting);
    assert.deepEqual(p.enum, s.enum, s.setting);
    assert.equal(p.minimum, s.min, s.setting);
    assert.equal(p.maximum, s.max, s.setting);
    assert.equal(p.description, s.description, s.setting);
    // "application": VS Code itself refuses the value in workspace settings.
    assert.equal(p.scope, 'application', s.setting);
  }
  const declared = Object.keys(props).filter((k) => k === 'ghostline.backend' || k.startsWith('ghostline.server.'));
  assert.deepEqual(declared.sort(), SERVER_SETTINGS.map((s) => `ghostline.${s.setting}`).sort());
  assert.ok(pkg.contributes.commands.some((c: { command: string }) => c.command === 'ghostline.setServerKey'));
});

test('nothing set: the local backend, with no problem', () => {
  const { settings, problems } = readServerSettings(() => undefined);
  assert.equal(settings.backend, 'local');
  assert.equal(settings.timeoutMs, 4000);
  assert.equal(settings.fallbackToLocal, true);
  assert.deepEqual(problems, []);
});

test('a server backend: values are read, trimmed, and a full configuration has no problem', () => {
  const raw: Record<string, unknown> = {
    backend: 'openai',
    'server.url': ' https://llm.example.com:8000 ',
    'server.model': 'Qwen/Qwen2.5-Coder-7B',
    'server.timeoutMs': 2500,
  };
  const { settings, problems } = readServerSettings((k) => raw[k]);
  assert.deepEqual(problems, []);
  assert.equal(settings.url, 'https://llm.example.com:8000');
  assert.equal(settings.timeoutMs, 2500);
  assert.equal(serverTemplate(settings)?.family, 'qwen2.5-coder');
});

test('bad values are named: a wrong type or an unknown name ignored, a number clamped (the rule of every setting)', () => {
  const raw: Record<string, unknown> = {
    backend: 'tgi',
    'server.timeoutMs': -5,
    'server.fallbackToLocal': 'yes',
    'server.contextTokens': 1.5,
    'server.promptFormat': 'chatml',
    'server.url': 42,
  };
  const { settings, problems } = readServerSettings((k) => raw[k]);
  assert.equal(settings.backend, 'local');
  assert.equal(settings.timeoutMs, 200, 'clamped to the minimum');
  assert.equal(settings.fallbackToLocal, true);
  assert.equal(settings.contextTokens, 2, 'rounded to a whole number');
  assert.equal(settings.promptFormat, 'auto');
  for (const name of ['backend', 'server.timeoutMs', 'server.fallbackToLocal', 'server.contextTokens', 'server.promptFormat', 'server.url']) {
    assert.ok(
      problems.some((p) => p.startsWith(`ghostline.${name} `)),
      `no problem names ghostline.${name}: ${problems.join(' | ')}`,
    );
  }
  assert.ok(problems.includes('ghostline.server.timeoutMs = -5 is out of range [200, 120000] or not a whole number; using 200.'), problems.join(' | '));
  assert.equal(readServerSettings((k) => (k === 'server.timeoutMs' ? 10_000_000 : undefined)).settings.timeoutMs, 120_000);
});

test('a server backend that cannot connect says why: no URL, not http, credentials in the URL, no model', () => {
  const base = readServerSettings(() => undefined).settings;
  assert.match(serverConfigError({ ...base, backend: 'llama.cpp' }) ?? '', /server\.url is empty/);
  assert.match(serverConfigError({ ...base, backend: 'llama.cpp', url: 'ftp://x' }) ?? '', /http:\/\/ or https:\/\//);
  assert.match(serverConfigError({ ...base, backend: 'llama.cpp', url: 'not a url' }) ?? '', /is not a URL/);
  assert.match(serverConfigError({ ...base, backend: 'llama.cpp', url: 'http://me:secret@host' }) ?? '', /Set Server Key/);
  assert.match(serverConfigError({ ...base, backend: 'ollama', url: 'http://127.0.0.1:11434' }) ?? '', /server\.model is required/);
  assert.equal(serverConfigError({ ...base, backend: 'llama.cpp', url: 'http://127.0.0.1:8080' }), null);
  assert.equal(serverConfigError(base), null);
});

test('the FIM format is guessed from common model names, and an unknown one means prefix-only prompts', () => {
  assert.equal(guessFimFamily('Qwen/Qwen2.5-Coder-7B'), 'qwen2.5-coder');
  assert.equal(guessFimFamily('starcoder2:3b'), 'starcoder');
  assert.equal(guessFimFamily('deepseek-ai/deepseek-coder-6.7b-base'), 'deepseek-coder');
  assert.equal(guessFimFamily('codellama:7b-code'), 'codellama');
  assert.equal(guessFimFamily('codellama:7b-code'), 'codellama');
  // Families that were trained with another family's markers, and one with its own.
  assert.equal(guessFimFamily('Qwen/CodeQwen1.5-7B'), 'starcoder');
  assert.equal(guessFimFamily('granite-code:3b'), 'starcoder');
  assert.equal(guessFimFamily('google/codegemma-2b'), 'codegemma');
  assert.equal(guessFimFamily('my-team-model'), null);
  const base = readServerSettings(() => undefined).settings;
  assert.equal(serverTemplate({ ...base, model: 'my-team-model' }), null);
  assert.equal(serverTemplate({ ...base, model: 'my-team-model', promptFormat: 'starcoder' })?.family, 'starcoder');
});

test('endpoints keep a base path (a gateway) and write a /v1 the user already gave once', () => {
  assert.equal(endpoint('http://127.0.0.1:8080', '/infill'), 'http://127.0.0.1:8080/infill');
  assert.equal(endpoint('http://127.0.0.1:8080/', '/infill'), 'http://127.0.0.1:8080/infill');
  assert.equal(endpoint('https://gw.example.com/llm/', '/v1/completions'), 'https://gw.example.com/llm/v1/completions');
  assert.equal(endpoint('http://host:8000/v1', '/v1/completions'), 'http://host:8000/v1/completions');
  assert.equal(endpoint('http://host:8000/v1/', '/v1/models'), 'http://host:8000/v1/models');
  assert.equal(endpoint('http://host:11434/ollama', '/api/generate'), 'http://host:11434/ollama/api/generate');
});
