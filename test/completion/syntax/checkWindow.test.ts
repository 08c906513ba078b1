import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { documentContext, positionAt, textSource } from '../../../src/completion/context/documentContext';
import { checkWindow } from '../../../src/completion/syntax/syntaxWindow';
import type { TextSource } from '../../../src/completion/types';
import { SyntaxRefiner } from '../../../src/completion/syntax/syntaxRefiner';

const refiner = new SyntaxRefiner();
before(async () => {
  assert.ok(await refiner.ready('typescript'));
  assert.ok(await refiner.ready('python'));
});
after(() => refiner.dispose());

/** A small model's window: about 740 characters of prefix, as at 512 tokens. */
const BUDGET = { prefixLines: 256, suffixLines: 64, prefixChars: 740, suffixChars: 250, snapLines: 16 };

/** The document with the cursor at █, as a whole file or (with `cut`) as a slice of one. */
function at(doc: string, cut?: TextSource['cut']) {
  const cursor = doc.indexOf('█');
  const text = doc.replace('█', '');
  const src = textSource(text, cut);
  const pos = positionAt(text, cursor);
  return { src, pos, ctx: documentContext(src, pos, BUDGET) };
}

test('issue 23 (a): a method in the middle of a long class, its header above the model window, is not dropped', () => {
  const methods = Array.from({ length: 40 }, (_, i) => `  m${i}(): number {\n    return this.items.size + ${i};\n  }\n\n`).join('');
  const { src, pos, ctx } = at(
    `export class A {\n  private items = new Map<string, number>();\n\n${methods}  average(): number {\n    const count = this.items.█\n  }\n}\n`,
  );
  assert.ok(!ctx.prefix.includes('class A'), 'the model window starts inside the class');
  const check = checkWindow(src, pos, ctx, 'typescript');
  assert.ok(check.window.prefix.startsWith('export class A {'), 'the check window starts at the top-level line');
  assert.equal(check.prose, false);
  assert.equal(refiner.refine('size;', check.window), 'size;');
});

test('a window inside a class whose header is out of reach starts in a block: the checks abstain', () => {
  // Parsed as a fragment, the class's members are stray code and a method header reads as an error.
  const methods = Array.from({ length: 400 }, (_, i) => `  m${i}(x: string): number {\n    return x.length + ${i};\n  }\n\n`).join('');
  const { src, pos, ctx } = at(`export class A {\n${methods}  █\n    return 0;\n  }\n}\n`);
  const check = checkWindow(src, pos, ctx, 'typescript');
  assert.equal(check.window.startsInBlock, true);
  const header = 'private average(x: string, y: number): number {';
  assert.equal(refiner.refine(header, check.window), header);
  assert.equal(refiner.addsErrors(header, check.window), null);
});

test('issue 23 (b): the cursor inside a docstring that opens above the model window is prose', () => {
  const lines = Array.from({ length: 60 }, (_, i) => `    Line ${i} of the prose: don't judge it (see below.\n`).join('');
  const { src, pos, ctx } = at(`def f():\n    """Summary.\n\n${lines}    .. v█\n    """\n    return 1\n`);
  assert.ok(!ctx.prefix.includes('"""'), 'the model window starts inside the docstring');
  assert.equal(checkWindow(src, pos, ctx, 'python').prose, true);
});

test('issue 23 (b): a comment and a string on the cursor line are prose, code is not', () => {
  for (const [doc, prose] of [
    ['const a = 1; // the value of █\n', true],
    ['const s = "hello █";\n', true],
    ['const a = f(█);\n', false],
  ] as const) {
    const { src, pos, ctx } = at(doc);
    assert.equal(checkWindow(src, pos, ctx, 'typescript').prose, prose, doc);
  }
});

test('issue 23 (c, d): the brackets open at the cursor, and the ones the document closes after it', () => {
  const { src, pos, ctx } = at('def f(\n    self, sep=None, maxsplit=-1\n█\n    return 1\n');
  const c = checkWindow(src, pos, ctx, 'python');
  assert.deepEqual(c.openAtCursor, [')']);
  assert.equal(c.closedAfterCursor, 0);
  const auto = at('x = foo(bar(█))\n');
  const d = checkWindow(auto.src, auto.pos, auto.ctx, 'python');
  assert.deepEqual(d.openAtCursor, [')', ')']);
  assert.equal(d.closedAfterCursor, 2);
});

test('a document whose first line is indented (a slice of a file) is a fragment: the window moves down to a top-level line or abstains', () => {
  // Inside a docstring whose opener is not in the document: read from its top, the prose is code.
  const doc = Array.from({ length: 30 }, (_, i) => `    Line ${i} of the prose: don't judge it (see below.\n`).join('');
  const inside = at(`${doc}    .. v█\n    """\n    return 1\n`);
  const c = checkWindow(inside.src, inside.pos, inside.ctx, 'python');
  assert.equal(c.window.startsInBlock, true);
  assert.equal(refiner.refine('ersionchanged:: 2.0', c.window), 'ersionchanged:: 2.0');
  // A top-level line below the slice's top: the window starts there, as for a window that does not reach the top.
  const below = at(`        return 1\n\n\ndef g(x):\n    return f(█)\n`);
  const d = checkWindow(below.src, below.pos, below.ctx, 'python');
  assert.ok(d.window.prefix.startsWith('def g(x):'));
  assert.equal(d.window.startsInBlock, false);
  // A whole file starting at the top is read from its top, as before.
  const whole = at(`import os\n\ndef g(x):\n    return f(█)\n`);
  assert.ok(checkWindow(whole.src, whole.pos, whole.ctx, 'python').window.prefix.startsWith('import os'));
});

test('a slice cut above (doc.cut): its first line may be the tail of a line inside a block, so it is no top-level line', () => {
  // The tail of `const [sessionHandle, ...` four blocks deep reads as a top-level statement.
  const doc =
    'nHandle, options] = sessions[i];\n        if (!sessionHandle.closed) {\n          return sessionHandle;\n        }\n      }\n    }\n\n' +
    '    const session = connect(authority);\n    const removeSession = () => {\n      timer = setTimeout(() => {\n        removeSession();\n      }, s█\n    };\n';
  const sliced = at(doc, { above: true, below: false });
  const c = checkWindow(sliced.src, sliced.pos, sliced.ctx, 'javascript');
  assert.equal(c.window.startsInBlock, true, 'no top-level line below the first: the checks abstain');
  assert.equal(refiner.refine('essionTimeout);', c.window), 'essionTimeout);');
  // Unmarked, the same text gives itself away: its lines close brackets they never opened (`]`, `}`), so the
  // window starts after the last of them, and here that leaves no top-level line either.
  const unmarked = at(doc);
  assert.equal(checkWindow(unmarked.src, unmarked.pos, unmarked.ctx, 'javascript').window.startsInBlock, true);
});

test('a document whose lines above the cursor close a bracket they never opened starts after that closer', () => {
  const { src, pos, ctx } = at('    return total;\n  }\n}\n\nexport function g(x) {\n  return f(█\n}\n');
  const c = checkWindow(src, pos, ctx, 'javascript');
  assert.ok(c.window.prefix.startsWith('export function g(x) {'), JSON.stringify(c.window.prefix));
  assert.equal(c.window.startsInBlock, false);
  // A balanced file is read from its top.
  const whole = at('import { f } from "./f";\n\nexport function g(x) {\n  return f(█\n}\n');
  assert.ok(checkWindow(whole.src, whole.pos, whole.ctx, 'javascript').window.prefix.startsWith('import'));
});

test('a slice cut below (doc.cut): its last line may be the head of a line, so it is left out of the window', () => {
  // Typing a module docstring's opening quotes; the slice ends in the middle of `if has(...)`.
  const doc =
    '""█\nrequests.hooks\n~~~~~~~~~~~~~~\n\nThis module provides the hooks system.\n"""\n\nHOOKS = ["response"]\n\n' +
    'def dispatch_hook(key, hooks, hook_data):\n    hooks = hooks or {}\n    if has';
  const sliced = at(doc, { above: false, below: true });
  const c = checkWindow(sliced.src, sliced.pos, sliced.ctx, 'python');
  assert.ok(!c.window.suffix.includes('if has'), 'the partial last line is left out');
  assert.equal(c.window.cutBelow, true);
  assert.equal(refiner.refine('"', c.window), '"');
  // As a whole file, `if has` is the file's real last line: the quote turns it from string into code, an error.
  const whole = at(doc);
  const w = checkWindow(whole.src, whole.pos, whole.ctx, 'python').window;
  assert.equal(w.cutBelow, false);
  assert.equal(refiner.refine('"', w), null);
});
