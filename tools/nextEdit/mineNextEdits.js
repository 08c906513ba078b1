#!/usr/bin/env node
// Mines bench/nextEdit/cases.jsonl, the frozen next-edit evaluation set, from the git history of a few
// permissively licensed projects (bench/nextEdit/SOURCES.md lists them and states the rule). Runs only where bare
// mirrors of those projects exist (the session's `fetch` tool puts them under /work/.mirror/<owner>+<name>/repo);
// it is not part of any test. Deterministic: each project is read from a pinned commit, with a pinned diff
// algorithm, so the same mirrors give the same set byte for byte.
//
//   node tools/nextEdit/mineNextEdits.js [--mirrors /work/.mirror] [--out bench/nextEdit/cases.jsonl] [--stats]
//
// The rule, per project, newest commit first (git log --no-merges from the pinned commit):
//  1. The commit changes exactly one source file (.py, or .ts/.tsx/.mts/.cts/.js/.jsx/.mjs/.cjs, not .d.ts) and that
//     file is modified (not added, deleted or renamed); other files (docs, changelog) may change beside it. Test
//     data, fixtures, snapshots, generated copies, vendored, built or minified files, playgrounds and files that
//     are not valid UTF-8 are skipped, and so are files over 32 KB (parent or child): files are kept whole, and the
//     set stays about 3 MB (with a 200 KB limit a draft set took 8.6 MB for 307 cases).
//  2. Its `git diff -U0 --diff-algorithm=myers` hunks, in file order: a pair (A, B) of consecutive hunks with at
//     most 10 unchanged lines between them, neither over 40 removed or 40 added lines, neither a whitespace-only
//     change, and related: B adds a token that A introduced (in A's added lines, not its removed ones) or B
//     removes a token that A removed (in A's removed lines, not its added ones). Tokens are identifiers of two or
//     more characters that are not keywords or ubiquitous names (self, this, None, ...), string literals and
//     numbers of two or more digits.
//  3. The first such pair of the commit makes its case (one case per commit), until the project has `cap` cases.
// A case: `before` = the parent's file with A applied (the user's edit), B = the true next edit as an edit of
// `before`, `change` = A as the smallest character edit (common prefix and suffix of A's old and new lines
// trimmed), `cursorOffset` = the end of A's inserted text in `before`. To keep the set small, `after` and
// `change.documentTextAfter` are not stored: `after` = `before` with `next` applied, `documentTextAfter` = `before`
// (bench/nextEdit/cases.ts rebuilds both).

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/** The projects, each read from a pinned commit (the mirror's HEAD when the set was made). */
const PROJECTS = [
  { repo: 'psf/black', head: '8947c48ef2077c3a301b03c1e814dc2e3f78436e', licence: 'MIT', cap: 42 },
  { repo: 'encode/uvicorn', head: 'e6c7ce791fc634b6eedee40e0d0207faa8a9aefd', licence: 'BSD-3-Clause', cap: 42 },
  { repo: 'pytest-dev/pytest', head: 'df87db7b0462fb764ef73fa00561adf8ad047572', licence: 'MIT', cap: 42 },
  { repo: 'mochajs/mocha', head: 'e6b9ee773481fd739ae24caeb42f32ac0b010f95', licence: 'MIT', cap: 42 },
  { repo: 'hapijs/hapi', head: 'f2a24f6635c0892842f6eaf9154d3788f2f1d084', licence: 'BSD-3-Clause', cap: 42 },
  { repo: 'vuejs/pinia', head: '254eec764ecccd120ab9dbc31352d76ffd6ecfa3', licence: 'MIT', cap: 42 },
];

const MAX_FILE_BYTES = 32 * 1024;
const MAX_HUNK_LINES = 40;
const MAX_GAP_LINES = 10;
const AT_MS = 1000;

/** Paths that are not hand-written source: test data, fixtures, generated or vendored copies, builds, scratch files. */
const SKIP_PATH =
  /(^|\/)(node_modules|vendor|vendored|dist|build|coverage|fixtures?|__fixtures__|__snapshots__|snapshots|deno|data|benchmarks?|profiling)\/|\.d\.[mc]?ts$|\.min\.js$|(^|\/)(play|playground)\.[tj]s$|(^|\/)src\/playground\.ts$/;

function languageOf(file) {
  if (/\.py$/.test(file)) return 'python';
  if (/\.d\.[mc]?ts$/.test(file)) return null;
  if (/\.(ts|tsx|mts|cts)$/.test(file)) return 'typescript';
  if (/\.(js|jsx|mjs|cjs)$/.test(file)) return 'javascript';
  return null;
}

/** Keywords and names too common to relate two edits: Python's, then JavaScript's and TypeScript's. */
const KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for from global if import in is ' +
    'lambda nonlocal not or pass raise return try while with yield self cls print str int len list dict set tuple bool object ' +
    'abstract any boolean case catch const constructor debugger declare default delete do enum export extends false function get ' +
    'implements instanceof interface keyof let module namespace never new null number private protected public readonly require ' +
    'satisfies static string super switch symbol this throw true type typeof undefined unknown var void of infer is asserts unique ' +
    'console exports'
  ).split(' '),
);

/** The tokens of some lines: identifiers (not keywords), string literals, numbers of 2+ digits. */
function tokens(text) {
  const out = new Set();
  for (const m of text.matchAll(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\\n]|\\.)*`|[A-Za-z_$][\w$]*|\d[\d_.]+/g)) {
    const t = m[0];
    if (/^["'`]/.test(t)) {
      if (t.length > 2) out.add(t.slice(1, -1));
    } else if (/^\d/.test(t)) out.add(t);
    else if (t.length >= 2 && !KEYWORDS.has(t)) out.add(t);
  }
  return out;
}

function git(gitDir, args, opts = {}) {
  return execFileSync('git', ['--git-dir', gitDir, '-c', 'core.quotepath=off', ...args], {
    maxBuffer: 512 * 1024 * 1024,
    encoding: opts.buffer ? 'buffer' : 'utf8',
    env: { ...process.env, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/** Commits newest first, each with its parent and the files it changed (status, path). */
function commits(gitDir, head) {
  const out = git(gitDir, ['log', '--no-merges', '--no-renames', '--format=format:@@%H %P', '--name-status', head]);
  const list = [];
  for (const block of out.split('@@').slice(1)) {
    const [header, ...rest] = block.split('\n');
    const [hash, parent] = header.trim().split(' ');
    if (!parent) continue; // the root commit
    const files = rest.filter((l) => l.includes('\t')).map((l) => ({ status: l.split('\t')[0], path: l.split('\t').at(-1) }));
    list.push({ hash, parent, files });
  }
  return list;
}

/** The file's text at a commit, or null when it is not valid UTF-8. */
function blob(gitDir, commit, file) {
  const bytes = git(gitDir, ['cat-file', 'blob', `${commit}:${file}`], { buffer: true });
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : null;
}

/** Lines with their line endings kept ("a\n", "b\r\n", "c"). */
function splitLines(text) {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The -U0 hunks as 0-based half-open line ranges of the old and new file. */
function hunks(gitDir, parent, commit, file) {
  const diff = git(gitDir, [
    'diff',
    '-U0',
    '--no-color',
    '--no-ext-diff',
    '--no-renames',
    '--diff-algorithm=myers',
    '--inter-hunk-context=0',
    parent,
    commit,
    '--',
    file,
  ]);
  const out = [];
  for (const m of diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    const [os, oc, ns, nc] = [Number(m[1]), m[2] === undefined ? 1 : Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])];
    // With a count of 0 the start is the line after which the change goes (1-based), i.e. the 0-based line before which.
    const oldStart = oc === 0 ? os : os - 1;
    const newStart = nc === 0 ? ns : ns - 1;
    out.push({ oldStart, oldEnd: oldStart + oc, newStart, newEnd: newStart + nc });
  }
  return out;
}

const isWhitespaceOnly = (a, b) => a.replace(/\s+/g, '') === b.replace(/\s+/g, '');

/** The smallest character edit turning `oldText` into `newText` at `offset`: common prefix and suffix trimmed. */
function trimmedEdit(offset, oldText, newText) {
  let p = 0;
  while (p < oldText.length && p < newText.length && oldText[p] === newText[p]) p++;
  let s = 0;
  while (s < oldText.length - p && s < newText.length - p && oldText[oldText.length - 1 - s] === newText[newText.length - 1 - s]) s++;
  return { offset: offset + p, removedText: oldText.slice(p, oldText.length - s), insertedText: newText.slice(p, newText.length - s) };
}

/** The first qualifying pair of a commit's file, as a case, or null. */
function caseOf(project, gitDir, c, file, language) {
  const hs = hunks(gitDir, c.parent, c.hash, file);
  if (hs.length < 2) return null;
  const oldText = blob(gitDir, c.parent, file);
  const newText = blob(gitDir, c.hash, file);
  if (oldText === null || newText === null) return null;
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  const join = (lines, from, to) => lines.slice(from, to).join('');
  for (let i = 0; i + 1 < hs.length; i++) {
    const [a, b] = [hs[i], hs[i + 1]];
    if (b.oldStart - a.oldEnd > MAX_GAP_LINES) continue;
    if ([a, b].some((h) => h.oldEnd - h.oldStart > MAX_HUNK_LINES || h.newEnd - h.newStart > MAX_HUNK_LINES)) continue;
    const aOld = join(oldLines, a.oldStart, a.oldEnd);
    const aNew = join(newLines, a.newStart, a.newEnd);
    const bOld = join(oldLines, b.oldStart, b.oldEnd);
    const bNew = join(newLines, b.newStart, b.newEnd);
    if (isWhitespaceOnly(aOld, aNew) || isWhitespaceOnly(bOld, bNew)) continue;
    const [aRemoved, aAdded, bRemoved, bAdded] = [aOld, aNew, bOld, bNew].map(tokens);
    const introduced = [...aAdded].filter((t) => !aRemoved.has(t) && bAdded.has(t));
    const gone = [...aRemoved].filter((t) => !aAdded.has(t) && bRemoved.has(t));
    if (introduced.length === 0 && gone.length === 0) continue;
    const prefix = join(oldLines, 0, a.oldStart);
    const between = join(oldLines, a.oldEnd, b.oldStart);
    const before = prefix + aNew + between + bOld + join(oldLines, b.oldEnd, oldLines.length);
    const change = trimmedEdit(prefix.length, aOld, aNew);
    const next = trimmedEdit(prefix.length + aNew.length + between.length, bOld, bNew);
    return {
      id: `${project.repo}@${c.hash.slice(0, 12)}:${file}`,
      repo: project.repo,
      licence: project.licence,
      commit: c.hash,
      parent: c.parent,
      path: file,
      language,
      shared: [...introduced, ...gone].sort().slice(0, 5),
      before,
      change: {
        path: file,
        offset: change.offset,
        removedLength: change.removedText.length,
        removedText: change.removedText,
        insertedText: change.insertedText,
        atMs: AT_MS,
      },
      cursorOffset: change.offset + change.insertedText.length,
      next: { offset: next.offset, removedLength: next.removedText.length, removedText: next.removedText, insertedText: next.insertedText },
    };
  }
  return null;
}

/** Whether a text looks generated or minified. */
function looksGenerated(text) {
  const head = text.slice(0, 600);
  if (/@generated|DO NOT EDIT|auto-?generated|generated by/i.test(head)) return true;
  const lines = text.split('\n');
  return lines.some((l) => l.length > 1000) || text.length / Math.max(1, lines.length) > 200;
}

function mineProject(project, mirrors, log) {
  const gitDir = path.join(mirrors, project.repo.replace('/', '+'), 'repo');
  if (!fs.existsSync(gitDir)) throw new Error(`no mirror of ${project.repo} at ${gitDir} (fetch github:${project.repo} first)`);
  const cases = [];
  const seen = { commits: 0, oneSourceFile: 0, withPair: 0 };
  for (const c of commits(gitDir, project.head)) {
    if (cases.length >= project.cap) break;
    seen.commits++;
    const sources = c.files.filter((f) => languageOf(f.path));
    if (sources.length !== 1 || sources[0].status !== 'M') continue;
    const file = sources[0].path;
    if (SKIP_PATH.test(file)) continue;
    const sizes = [c.parent, c.hash].map((h) => Number(git(gitDir, ['cat-file', '-s', `${h}:${file}`]).trim()));
    if (sizes.some((s) => s > MAX_FILE_BYTES)) continue;
    seen.oneSourceFile++;
    const found = caseOf(project, gitDir, c, file, languageOf(file));
    if (!found || looksGenerated(found.before)) continue;
    seen.withPair++;
    cases.push(found);
  }
  log(`${project.repo}: ${cases.length} cases (${seen.commits} commits read, ${seen.oneSourceFile} with one source file)`);
  return cases;
}

function main() {
  const argv = process.argv.slice(2);
  const arg = (name, fallback) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
  const mirrors = arg('mirrors', '/work/.mirror');
  const out = arg('out', path.join(__dirname, '..', '..', 'bench', 'nextEdit', 'cases.jsonl'));
  const log = (s) => console.error(`[mine-next-edits] ${s}`);
  const all = PROJECTS.flatMap((p) => mineProject(p, mirrors, log));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, all.map((c) => JSON.stringify(c)).join('\n') + '\n');
  log(`${all.length} cases, ${fs.statSync(out).size} bytes -> ${out}`);
  if (argv.includes('--stats')) {
    const by = {};
    for (const c of all) by[`${c.repo} ${c.language}`] = (by[`${c.repo} ${c.language}`] ?? 0) + 1;
    console.log(JSON.stringify(by, null, 2));
    const sizes = all.map((c) => c.before.length).sort((x, y) => x - y);
    console.log('before sizes p50/p90/max', sizes[sizes.length >> 1], sizes[Math.floor(sizes.length * 0.9)], sizes.at(-1));
  }
}

main();
