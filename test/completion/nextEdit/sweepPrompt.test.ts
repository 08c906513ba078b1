import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { buildSweepPrompt, promptPath, SWEEP_STOP_STRINGS, type SweepPromptInput } from '../../../src/completion/nextEdit/sweepPrompt';
import { ROOT } from '../../helpers';

const GOLDENS = path.join(ROOT, 'test', 'completion', 'nextEdit', 'goldens');

/** Each golden file holds, byte for byte, the prompt for its input; written by hand from the pinned format. */
const CASES: Record<string, SweepPromptInput> = {
  minimal: {
    path: 'src/app.ts',
    related: [],
    history: [],
    originalWindow: 'const a = 1;\nconst b = 2;\nconsole.log(a + b);',
    currentWindow: 'const a = 1;\nconst b = 2;\nconsole.log(a + b);',
  },
  // The example of the model card's run_model.py, with a second related file and a second history block.
  full: {
    path: 'greet.py',
    related: [
      {
        path: 'utils.py',
        text: 'def get_time_of_day():\n    from datetime import datetime\n    hour = datetime.now().hour\n    if hour < 12:\n        return "morning"\n    return "evening"\n',
      },
      { path: 'notes/readme.md', text: 'Greeting helpers.' },
    ],
    history: [
      { path: 'utils.py', original: 'def get_time_of_day():\n    return "day"\n', updated: 'def get_time_of_day():\n    from datetime import datetime' },
      { path: 'greet.py', original: 'def greet():\n    print("Hello!")', updated: 'def greet(name):\n    print(f"Hello, {name}!")' },
    ],
    originalWindow: 'def greet(name):\n    print(f"Hello, {name}!")\n\ngreet("Alice")',
    currentWindow: 'from utils import get_time_of_day\n\ndef greet(name):\n    print(f"Hello, {name}!")\n\ngreet("Alice")',
  },
  windowsPaths: {
    path: 'src\\lib\\util.py',
    related: [{ path: 'src\\lib\\__init__.py', text: 'from .util import x\r\n' }],
    history: [{ path: 'src\\lib\\util.py', original: 'y = 2', updated: 'y = 3' }],
    originalWindow: 'x = 1\r\ny = 2',
    currentWindow: 'x = 1\r\ny = 3',
  },
  emptyFile: { path: 'empty.ts', related: [], history: [], originalWindow: '', currentWindow: '' },
  windowEndsWithEmptyLine: { path: 'end.py', related: [], history: [], originalWindow: 'x = 1\n', currentWindow: 'x = 2\n' },
  // The input and expected prompt of Zed's own test, test_build_prompt_uses_run_model_ordering.
  zedOrdering: {
    path: 'src/main.rs',
    related: [{ path: 'src/context.rs', text: 'context' }],
    history: [{ path: 'src/lib.rs', original: 'old', updated: 'new' }],
    originalWindow: 'old window',
    currentWindow: 'current window',
  },
};

test('every golden prompt is built byte for byte, and every golden file has a case', () => {
  const files = fs.readdirSync(GOLDENS).filter((f) => f.endsWith('.txt'));
  assert.deepEqual(files.map((f) => f.slice(0, -4)).sort(), Object.keys(CASES).sort());
  for (const [name, input] of Object.entries(CASES)) {
    assert.equal(buildSweepPrompt(input), fs.readFileSync(path.join(GOLDENS, `${name}.txt`), 'utf8'), name);
  }
});

test('the prompt ends with the updated header and one newline, so the answer is the window itself', () => {
  const prompt = buildSweepPrompt(CASES.minimal);
  assert.ok(prompt?.endsWith('<|file_sep|>updated/src/app.ts\n'));
  assert.equal(prompt?.split('<|file_sep|>').length, 4);
});

test('text that holds a reserved token, or a path with a newline, gives no prompt', () => {
  for (const token of ['<|file_sep|>', '</s>', '<|endoftext|>']) {
    assert.equal(buildSweepPrompt({ ...CASES.minimal, currentWindow: `const s = '${token}';` }), null, token);
    assert.equal(buildSweepPrompt({ ...CASES.minimal, related: [{ path: 'r.ts', text: token }] }), null, token);
    assert.equal(buildSweepPrompt({ ...CASES.minimal, history: [{ path: 'h.ts', original: '', updated: token }] }), null, token);
  }
  assert.equal(buildSweepPrompt({ ...CASES.minimal, path: 'a\nb.ts' }), null);
  assert.notEqual(buildSweepPrompt({ ...CASES.minimal, currentWindow: 'a <| b |> c </div>' }), null, 'look-alikes are fine');
});

test('paths use "/" and the stop strings are the section separator and the end-of-text tokens', () => {
  assert.equal(promptPath('src\\a\\b.ts'), 'src/a/b.ts');
  assert.equal(promptPath('src/a/b.ts'), 'src/a/b.ts');
  assert.deepEqual([...SWEEP_STOP_STRINGS], ['<|file_sep|>', '</s>', '<|endoftext|>']);
});
