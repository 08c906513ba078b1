import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { GENERATE_PRESET, INLINE_PRESET, inlineDecodeOptions, inlineMode } from '../../src/completion/presets';
import { SETTINGS, validateSettings } from '../../src/completion/settingsSchema';
import { resolveDecodeOptions } from '../../src/engine/shared/decodeOptions';
import { SERVER_SETTINGS } from '../../src/servers/serverSettings';
import { ROOT } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const props = pkg.contributes.configuration.properties as Record<
  string,
  {
    default: unknown;
    minimum?: number;
    maximum?: number;
    maxItems?: number;
    items?: { maxLength?: number };
    type: string;
    enum?: string[];
    description?: string;
  }
>;

test('package.json settings agree with the schema and the presets (defaults, bounds)', () => {
  for (const s of SETTINGS) {
    const p = props[`ghostline.${s.key}`];
    assert.ok(p, `package.json lacks ghostline.${s.key}`);
    assert.deepEqual(p.default, s.default, `default of ghostline.${s.key}`);
    const list = s.type === 'string[]';
    assert.equal(p.minimum, list ? undefined : s.min, `minimum of ghostline.${s.key}`);
    assert.equal(list ? p.maxItems : p.maximum, s.max, `maximum of ghostline.${s.key}`);
    assert.equal(p.items?.maxLength, s.maxLength, `longest string of ghostline.${s.key}`);
    assert.equal(p.type, s.type === 'string[]' ? 'array' : s.type, `type of ghostline.${s.key}`);
    assert.deepEqual(p.enum, s.enum ? [...s.enum] : undefined, `allowed values of ghostline.${s.key}`);
  }
  assert.equal(props['ghostline.inline.temperature'].default, INLINE_PRESET.temperature);
  assert.equal(props['ghostline.generate.maxNewTokens'].default, GENERATE_PRESET.maxNewTokens);
  // The server settings have their own table and test (test/servers/serverSettings.test.ts).
  const declared = Object.keys(props).filter(
    (k) =>
      ![
        'ghostline.enable',
        'ghostline.languages',
        'ghostline.modelPath',
        'ghostline.modelFile',
        'ghostline.nextEdit.modelPath',
        'ghostline.nextEdit.serverUrl',
        'ghostline.hub.endpoint',
        'ghostline.download.caFile',
      ].includes(k) && !SERVER_SETTINGS.some((s) => k === `ghostline.${s.setting}`),
  );
  assert.deepEqual(declared.sort(), SETTINGS.map((s) => `ghostline.${s.key}`).sort(), 'no setting without a schema entry');
});

test('invalid values are clamped or ignored, each with a message naming the setting', () => {
  const raw: Record<string, unknown> = {
    'inline.temperature': 'hot',
    'inline.topK': -5,
    'inline.maxNewTokens': 1e9,
    'inline.topP': 0.5,
    'inline.stop': 'x',
    'inline.prefetch': 'yes',
  };
  const { values, problems } = validateSettings((k) => raw[k]);
  assert.equal(values['inline.temperature'], INLINE_PRESET.temperature);
  assert.equal(values['inline.topK'], 0);
  assert.equal(values['inline.maxNewTokens'], 512);
  assert.equal(values['inline.topP'], 0.5);
  assert.deepEqual(values['inline.stop'], []);
  assert.equal(values['inline.prefetch'], true);
  assert.equal(problems.length, 5);
  assert.ok(problems.some((p) => p.startsWith('ghostline.inline.temperature must be a number')));
  assert.ok(problems.some((p) => p.includes('ghostline.inline.topK = -5 is out of range')));
});

test('an absurd stop list: the first 32 short strings are used, with one message; the engine takes what is left', () => {
  const many = Array.from({ length: 200_000 }, (_, i) => `s${i}`);
  const raw: Record<string, unknown> = { 'inline.stop': ['x'.repeat(10_000), '', ...many], 'generate.stop': ['END'] };
  const { values, problems } = validateSettings((k) => raw[k]);
  assert.deepEqual(values['inline.stop'], many.slice(0, 32));
  assert.deepEqual(values['generate.stop'], ['END']);
  assert.deepEqual(problems, ['ghostline.inline.stop: 1 string(s) longer than 256 characters ignored; only the first 32 of 200000 strings are used.']);
  // With the FIM template's stop tokens added, the list stays inside the engine's limit.
  const options = inlineDecodeOptions({ ...INLINE_PRESET, stop: values['inline.stop'] as string[] }, 'line', 'x = ');
  assert.doesNotThrow(() => resolveDecodeOptions({ ...options, stop: [...(options.stop ?? []), '<|endoftext|>', '<|fim_pad|>', '<|repo_name|>'] }));
});

test('inline mode: one line with code right of the cursor, a block on an empty line or after an opener', () => {
  assert.equal(inlineMode('foo(', ')'), 'line');
  assert.equal(inlineMode('    ', ''), 'block');
  assert.equal(inlineMode('def f(x):', ''), 'block');
  assert.equal(inlineMode('x = compute', ''), 'line');
  assert.equal(inlineDecodeOptions(INLINE_PRESET, 'line', 'x = ').maxLines, 1);
  assert.equal(inlineDecodeOptions(INLINE_PRESET, 'block', '    ').maxLines, INLINE_PRESET.maxLines);
  assert.equal(inlineDecodeOptions(INLINE_PRESET, 'block', 'def f():').maxLines, INLINE_PRESET.maxLines + 1);
});

test('one table of decode options: engine defaults, wire names, CLI flags and both presets come from it', async () => {
  const { DECODE_TABLE, snakeCase, kebabCase } = await import('../../src/engine/shared/decodeTable');
  const { PRESET_TABLE, presetDefaults } = await import('../../src/completion/presetTable');
  const { DEFAULT_DECODE_OPTIONS, resolveDecodeOptions } = await import('../../src/engine/shared/decodeOptions');
  const { SNAKE_TO_OPTION } = await import('../../src/cli/snakeCaseOptions');
  assert.deepEqual(Object.keys(DEFAULT_DECODE_OPTIONS).sort(), DECODE_TABLE.map((r) => r.key).sort());
  for (const row of DECODE_TABLE) {
    assert.equal(SNAKE_TO_OPTION.get(snakeCase(row.key)), row.key);
    assert.match(kebabCase(row.key), /^[a-z]+(-[a-z]+)*$/);
    // The engine accepts every preset value, and refuses one past its limits.
    const presetRow = PRESET_TABLE.find((p) => p.key === row.key);
    for (const preset of ['inline', 'generate'] as const) {
      const col = presetRow?.[preset];
      if (col) assert.doesNotThrow(() => resolveDecodeOptions({ [row.key]: col.default }), `${preset}.${row.key}`);
      if (col?.setting?.max !== undefined && row.max !== undefined)
        assert.ok(col.setting.max <= row.max, `the setting ${col.setting.key} allows more than the engine`);
      if (col?.setting?.min !== undefined && row.min !== undefined)
        assert.ok(col.setting.min >= row.min, `the setting ${col.setting.key} allows less than the engine`);
    }
    if (row.max !== undefined && row.type === 'string[]')
      assert.throws(() => resolveDecodeOptions({ [row.key]: Array.from({ length: row.max! + 1 }, () => 'x') }), new RegExp(`${row.key} takes at most`));
    else if (row.max !== undefined) assert.throws(() => resolveDecodeOptions({ [row.key]: row.max! + 1 }), new RegExp(`${row.key} must be between`));
  }
  // Every preset row is an engine option.
  for (const p of PRESET_TABLE)
    assert.ok(
      DECODE_TABLE.some((r) => r.key === p.key),
      p.key,
    );
  // The presets are exactly their columns, and their settings are in package.json with the same bounds.
  assert.deepEqual({ ...INLINE_PRESET }, presetDefaults('inline'));
  assert.deepEqual({ ...GENERATE_PRESET }, presetDefaults('generate'));
  assert.equal(GENERATE_PRESET.timeBudgetMs, 20000);
  for (const s of SETTINGS) assert.ok(props[`ghostline.${s.key}`], s.key);
});

test('presetFromSettings: each option with a setting takes its validated value, the rest keep the preset', async () => {
  const { presetFromSettings } = await import('../../src/completion/presets');
  const { values } = validateSettings((k) => ({ 'generate.topK': 7, 'engine.speculativeTokens': 0, 'inline.maxLines': 3 })[k]);
  const g = presetFromSettings('generate', values);
  assert.equal(g.topK, 7);
  assert.equal(g.speculativeTokens, 0);
  assert.equal(g.timeBudgetMs, GENERATE_PRESET.timeBudgetMs);
  const i = presetFromSettings('inline', values);
  assert.equal(i.maxLines, 3);
  assert.equal(i.speculativeTokens, 0);
  assert.equal(i.topK, INLINE_PRESET.topK);
});
