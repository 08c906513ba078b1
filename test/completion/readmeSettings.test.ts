/**
 * The README's settings table is what users read: every default it states must be package.json's, and every
 * setting package.json contributes must be in it.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers';

const props: Record<string, { default?: unknown }> = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).contributes.configuration.properties;
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** `| \`ghostline.a.b\` / \`c\` | \`1\` / \`2\` | ...`: each name (later ones relative to the first's prefix) with its stated default. */
function tableRows(): { key: string; stated: string }[] {
  const rows: { key: string; stated: string }[] = [];
  for (const line of readme.split('\n')) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    if (cells.length < 4 || !cells[1].startsWith('`ghostline.')) continue;
    const names = cells[1].split(/`,? \/ `|`, `/).map((n) => n.replace(/`/g, ''));
    const values = [...cells[2].matchAll(/`([^`]*)`/g)].map((m) => m[1]);
    const prefix = names[0].slice(0, names[0].lastIndexOf('.') + 1);
    for (const [i, n] of names.entries()) rows.push({ key: n.startsWith('ghostline.') ? n : prefix + n, stated: values[i] ?? values[0] });
  }
  return rows;
}

test("the README's settings table states package.json's defaults, for every setting", () => {
  const rows = tableRows();
  assert.ok(rows.length > 20, `only ${rows.length} settings found in the README table`);
  for (const { key, stated } of rows) {
    assert.ok(key in props, `the README lists ${key}, which package.json does not contribute`);
    const actual = props[key].default;
    const expected = typeof actual === 'string' ? actual : JSON.stringify(actual);
    const read = typeof actual === 'string' ? stated.replace(/^"(.*)"$/, '$1') : stated.replace(/\s/g, '');
    assert.equal(read, typeof actual === 'string' ? expected : expected.replace(/\s/g, ''), `${key}: README says ${stated}, package.json ${expected}`);
  }
  const listed = new Set(rows.map((r) => r.key));
  const missing = Object.keys(props).filter((k) => !listed.has(k));
  assert.deepEqual(missing, [], 'settings missing from the README table');
});
