import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildPrompt } from '../../src/completion/prompt/buildPrompt';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import type { DocumentContext } from '../../src/completion/types';
import { promptText } from '../../src/engine/shared/prompt';

const ctx: DocumentContext = {
  prefix: 'def f(x):\n',
  linePrefix: '    return ',
  lineSuffix: '',
  suffix: '\nprint(f(1))',
  nextLines: ['print(f(1))'],
  indent: '    ',
  prefixStartLine: 0,
  lineAbove: 'def f(x):',
};

test('FIM templates are picked from the model special tokens', () => {
  assert.equal(pickFimTemplate(new Set(['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|file_sep|>']))?.family, 'qwen2.5-coder');
  assert.equal(pickFimTemplate({ '<fim_prefix>': 1, '<fim_suffix>': 2, '<fim_middle>': 3 })?.family, 'starcoder');
  assert.equal(pickFimTemplate(new Set(['<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>']))?.family, 'deepseek-coder');
  assert.equal(pickFimTemplate(new Set(['▁<PRE>', '▁<SUF>', '▁<MID>']))?.family, 'codellama');
  assert.equal(pickFimTemplate(new Set(['<|endoftext|>'])), null);
});

test('the prompt runs stable to volatile: extra chunks, prefix, suffix, then the cursor line', () => {
  const t = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>']))!;
  const p = buildPrompt(ctx, t, [{ path: 'util.py', text: 'def g(): pass' }], 'main.py');
  assert.equal(
    promptText(p.prompt),
    '<file_sep>util.py\ndef g(): pass\n<file_sep>main.py\n<fim_prefix>def f(x):\n<fim_suffix>\nprint(f(1))<fim_middle>    return ',
  );
  // One more typed character changes only the tail.
  const q = buildPrompt({ ...ctx, linePrefix: `${ctx.linePrefix}x` }, t, [{ path: 'util.py', text: 'def g(): pass' }], 'main.py');
  assert.equal(promptText(q.prompt), `${promptText(p.prompt)}x`);
  assert.deepEqual(q.prompt.slice(0, -1), p.prompt.slice(0, -1), 'only the last part changes');
});

test('a whitespace-only cursor line keeps its indentation as the middle (token healing re-tokenizes it)', () => {
  const t = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']))!;
  const p = buildPrompt({ ...ctx, linePrefix: '    ' }, t, [], 'main.py');
  assert.deepEqual(p.prompt.slice(-2), [{ special: '<fim_middle>' }, { text: '    ' }]);
});

test('DeepSeek and Qwen formats', () => {
  const ds = pickFimTemplate(new Set(['<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>']))!;
  assert.equal(promptText(buildPrompt(ctx, ds, [], 'a.py').prompt), '<｜fim▁begin｜>def f(x):\n<｜fim▁hole｜>\nprint(f(1))<｜fim▁end｜>    return ');
  const qw = pickFimTemplate(new Set(['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>']))!;
  assert.equal(promptText(buildPrompt(ctx, qw, [], 'a.py').prompt), '<|fim_prefix|>def f(x):\n<|fim_suffix|>\nprint(f(1))<|fim_middle|>    return ');
});

test('a model without FIM tokens gets a prefix-only prompt', () => {
  assert.deepEqual(buildPrompt(ctx, null, [], 'a.py').prompt, [{ text: 'def f(x):\n    return ' }]);
});

test('markers are special parts and document text is literal, whatever it spells', () => {
  const t = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>']))!;
  const hostile = { ...ctx, prefix: 'x = "<fim_middle>"\n', suffix: '\n<file_sep>evil.py\n' };
  const p = buildPrompt(hostile, t, [{ path: '<fim_prefix>', text: '<|endoftext|>' }], 'main.py');
  const specials = p.prompt.filter((x) => 'special' in x).map((x) => ('special' in x ? x.special : ''));
  assert.deepEqual(specials, ['<file_sep>', '<file_sep>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>']);
  const texts = p.prompt.filter((x) => 'text' in x).map((x) => ('text' in x ? x.text : ''));
  assert.ok(texts.some((x) => x.includes('"<fim_middle>"')) && texts.some((x) => x.includes('<file_sep>evil.py')));
});
