import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompletionService } from '../../src/completion/completionService';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import type { Generator } from '../../src/completion/generator';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { MIDDLE_ANCHOR_LINES } from '../../src/completion/prompt/buildPrompt';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { Engine } from '../../src/engine/worker/engine';
import { TINY } from '../helpers';
import { recordingEngine } from './recordingEngine';

let engine: Engine;
before(async () => {
  engine = await Engine.load(TINY, { threads: 1 });
});
after(async () => engine.dispose());

const backend = (aside = true) => recordingEngine(engine, aside);

const service = (g: Generator) =>
  new CompletionService(
    g,
    () => pickFimTemplate(engine.info.specialTokens),
    () => ({ ...defaultCompletionSettings(), prefetch: false, minConfidence: 1 }),
    () => ({ contextTokens: engine.info.contextLength, charsPerToken: engine.info.charsPerToken }),
  );

// Lines 0-13 of a module, with a long tail below the cursor: everything after the FIM prefix is that tail.
const LINES = [
  'import os',
  'import sys',
  '',
  '',
  'def read_lines(path):',
  '    with open(path) as f:',
  '        lines = [l.rstrip() for l in f]',
  '    return lines',
];
const TAIL = Array.from({ length: 12 }, (_, i) => `def helper_${i}(value):\n    return value * ${i + 2}\n`).join('\n');
const lastLine = MIDDLE_ANCHOR_LINES - 1;
assert.equal(LINES.length, MIDDLE_ANCHOR_LINES, 'the cursor line is the last one before an anchor line');

const docAt = (lines: string[]) => {
  const text = `${lines.join('\n')}\n\n${TAIL}`;
  const cursor = lines.join('\n').length;
  return { doc: textSource(text), cursor: positionAt(text, cursor), languageId: 'python', path: 'lines.py', explicit: false };
};

/** A service that completed at the end of the line above an anchor line, which warms the line below aside once. */
async function completedAtLineEnd() {
  const b = backend();
  const svc = service(b.g);
  engine.resetCache();
  await svc.complete(docAt(LINES));
  await svc.idle();
  assert.equal(b.warmed.length, 1);
  return { ...b, svc };
}

test('at the end of the line above an anchor line the line below is warmed aside, and Enter then prefills a few tokens', async () => {
  const { svc, warmed, prefilled } = await completedAtLineEnd();
  assert.ok(warmed[0].includes('    return lines\n'), 'the warmed prompt holds the finished line in its prefix');
  assert.equal(engine.keptTokenIds.length, 1, "the line's own prompt is kept beside it");
  const enter = await svc.complete(docAt([...LINES, '']));
  // A block's first line may be answered before the generation ends (no stats yet): the backend's count is read after it.
  await enter.fuller;
  assert.equal(enter.source, 'model');
  assert.ok(prefilled.at(-1)! <= 4, `prefilled ${prefilled.at(-1)}`);

  // Without prefillAside the same Enter re-runs everything after the prefix.
  const cold = backend(false);
  const plain = service(cold.g);
  engine.resetCache();
  await plain.complete(docAt(LINES));
  await plain.idle();
  const enterCold = await plain.complete(docAt([...LINES, '']));
  await enterCold.fuller;
  assert.ok(cold.prefilled.at(-1)! > 40, `prefilled ${cold.prefilled.at(-1)}`);
});

test('a keystroke on the same line after the warm-up comes back to its own prompt', async () => {
  const { svc, prefilled } = await completedAtLineEnd();
  const more = [...LINES.slice(0, lastLine), `${LINES[lastLine]}  # done`];
  const before = prefilled.length;
  await svc.complete(docAt(more));
  assert.equal(prefilled.length, before + 1, 'the keystroke ran the model');
  assert.ok(prefilled[before] <= 10, `prefilled ${prefilled[before]}: the typed text only`);
});

test('no warm-up where Enter keeps the prompt head, mid-line, or for an explicit request', async () => {
  const { g, warmed } = backend();
  const svc = service(g);
  engine.resetCache();
  await svc.complete(docAt(LINES.slice(0, 5))); // the next line is no anchor line
  const text = `${LINES.join('\n')}\n\n${TAIL}`;
  const midLine = text.indexOf('    return lines') + 6;
  await svc.complete({ ...docAt(LINES), cursor: positionAt(text, midLine) });
  await svc.complete({ ...docAt(LINES), explicit: true });
  await svc.idle();
  assert.deepEqual(warmed, []);
});

test('a keystroke before the user stops typing drops the pending warm-up: only the last answer warms', async () => {
  const { g, warmed } = backend();
  const svc = service(g);
  engine.resetCache();
  await svc.complete(docAt(LINES));
  await svc.complete(docAt([...LINES.slice(0, lastLine), `${LINES[lastLine]} `]));
  await svc.idle();
  assert.equal(warmed.length, 1);
  assert.ok(warmed[0].includes('    return lines \n'), 'the warm-up is of the latest text');
});
