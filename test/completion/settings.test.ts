import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { GENERATE_PRESET, INLINE_PRESET, inlineDecodeOptions, inlineMode } from '../../src/completion/presets';
import { SETTINGS, validateSettings } from '../../src/completion/settingsSchema';
import { ROOT } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const props = pkg.contributes.configuration.properties as Record<string, { default: unknown; minimum?: number; maximum?: number; type: string }>;

test('package.json settings agree with the schema and the presets (defaults, bounds)', () => {
  for (const s of SETTINGS) {
    const p = props[`ghostline.${s.key}`];
    assert.ok(p, `package.json lacks ghostline.${s.key}`);
    assert.deepEqual(p.default, s.default, `default of ghostline.${s.key}`);
    assert.equal(p.minimum, s.min, `minimum of ghostline.${s.key}`);
    assert.equal(p.maximum, s.max, `maximum of ghostline.${s.key}`);
  }
  assert.equal(props['ghostline.inline.temperature'].default, INLINE_PRESET.temperature);
  assert.equal(props['ghostline.generate.maxNewTokens'].default, GENERATE_PRESET.maxNewTokens);
  const declared = Object.keys(props).filter((k) => !['ghostline.enable', 'ghostline.languages', 'ghostline.modelPath', 'ghostline.modelFile', 'ghostline.hub.endpoint'].includes(k));
  assert.deepEqual(declared.sort(), SETTINGS.map((s) => `ghostline.${s.key}`).sort(), 'no setting without a schema entry');
});

test('invalid values are clamped or ignored, each with a message naming the setting', () => {
  const raw: Record<string, unknown> = { 'inline.temperature': 'hot', 'inline.topK': -5, 'inline.maxNewTokens': 1e9, 'inline.topP': 0.5, 'inline.stop': 'x', 'inline.prefetch': 'yes' };
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

test('inline mode: one line with code right of the cursor, a block on an empty line or after an opener', () => {
  assert.equal(inlineMode('foo(', ')'), 'line');
  assert.equal(inlineMode('    ', ''), 'block');
  assert.equal(inlineMode('def f(x):', ''), 'block');
  assert.equal(inlineMode('x = compute', ''), 'line');
  assert.equal(inlineDecodeOptions(INLINE_PRESET, 'line', 'x = ').maxLines, 1);
  assert.equal(inlineDecodeOptions(INLINE_PRESET, 'block', '    ').maxLines, INLINE_PRESET.blockLines);
  assert.equal(inlineDecodeOptions(INLINE_PRESET, 'block', 'def f():').maxLines, INLINE_PRESET.blockLines + 1);
});
