/**
 * Document goldens (as Tabby's post-processing goldens are): a whole document with a cursor marker (┃), what the
 * model writes there, and what the user is shown. Each runs through the product's own pipeline, the editor's
 * CompletionService: the context window, the prompt, every filter, tree-sitter (real grammars) and the gate,
 * with a stand-in generator that answers the document's `model` text. One YAML file per case in
 * test/completion/documents/, readable as the code it is about.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { CompletionService } from '../../src/completion/completionService';
import { positionAt, textSource } from '../../src/completion/context/documentContext';
import { pickFimTemplate } from '../../src/completion/prompt/fimTemplates';
import { defaultCompletionSettings } from '../../src/completion/settings';
import { SyntaxRefiner } from '../../src/completion/syntax/syntaxRefiner';
import { ROOT } from '../helpers';
import { FakeGenerator } from './fakeGenerator';

const DIR = path.join(ROOT, 'test', 'completion', 'documents');
const CURSOR = '┃';
const EXTENSIONS: Record<string, string> = { python: 'py', typescript: 'ts', javascript: 'js', go: 'go', rust: 'rs', java: 'java', c: 'c', cpp: 'cpp' };

interface DocumentGolden {
  language: string;
  model: string;
  expect: string;
  document: string;
}

const template = pickFimTemplate(new Set(['<fim_prefix>', '<fim_suffix>', '<fim_middle>']));
const settings = { ...defaultCompletionSettings(), prefetch: false };
const syntax = new SyntaxRefiner();
after(() => syntax.dispose());

const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.yaml'));

test('the document goldens are there, each with one cursor', () => {
  assert.ok(files.length >= 8, `${files.length} documents`);
  for (const f of files) {
    const g = parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as DocumentGolden;
    assert.equal(g.document.split(CURSOR).length, 2, `${f}: one ${CURSOR} in the document`);
    assert.ok(EXTENSIONS[g.language], `${f}: a language with a grammar (${g.language})`);
  }
});

for (const file of files) {
  test(`document golden: ${file.replace(/\.yaml$/, '')}`, async () => {
    const g = parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as DocumentGolden;
    assert.ok(await syntax.ready(g.language), `the ${g.language} grammar loads`);
    const at = g.document.indexOf(CURSOR);
    const text = g.document.slice(0, at) + g.document.slice(at + CURSOR.length);
    const service = new CompletionService(
      new FakeGenerator(() => g.model),
      () => template,
      () => settings,
      () => ({ contextTokens: 2048 }),
      syntax,
    );
    const out = await service.complete({
      doc: textSource(text),
      cursor: positionAt(text, at),
      languageId: g.language,
      path: `src/${file.replace(/\.yaml$/, '')}.${EXTENSIONS[g.language]}`,
      explicit: true,
    });
    assert.equal(out.items[0] ?? '', g.expect, `${file}: shown ${JSON.stringify(out.items[0] ?? '')} (the model wrote ${JSON.stringify(g.model)})`);
  });
}
