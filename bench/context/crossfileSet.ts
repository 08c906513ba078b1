// The frozen cross-file eval set, tools/model/eval/crossfile.json.gz (made by tools/model/make_crossfile_eval.py,
// whose docstring states the sampling rules): real multi-file projects, and cursor positions where the true
// completion uses a name declared in ANOTHER file of the same project.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { packageRoot } from '../../src/engine/host/defaultModel';

/** The set's file, relative to the repository root. */
/**
 * How long one tree-sitter parse may run in the context benches: they count what is found, so a large file must not
 * be skipped because the machine was busy (the editor's deadline, 100 ms, protects its thread, which a bench has not).
 */
export const BENCH_PARSE_TIMEOUT_MS = 10_000;

export const CROSSFILE_SET = path.join('tools', 'model', 'eval', 'crossfile.json.gz');

export type CrossfileLanguage = 'python' | 'typescript' | 'javascript';

/** One project of the set. */
export interface CrossfilePackage {
  /** npm package name (maybe scoped, `@scope/name`) or Debian package name (`python3-...`). */
  name: string;
  version: string;
  /** SPDX expression (what the package declares, or its Debian copyright file). */
  licence: string;
  language: CrossfileLanguage;
  /** How many of its files the set holds. */
  files: number;
}

/** One cursor position. */
export interface CrossfileSample {
  /** A `CrossfilePackage.name`. */
  package: string;
  /** Path inside the project (`/` separators), a key of `packageFiles(set, package)`. */
  path: string;
  language: CrossfileLanguage;
  /** 0-based line of the cursor. */
  line: number;
  /** 0-based column of the cursor in UTF-16 code units (as VS Code's Position). */
  character: number;
  /** The rest of the line after the cursor. */
  expected: string;
  /** `at-name`: the cursor right before `name`; `line-start`: after the line's indentation. */
  kind: 'at-name' | 'line-start';
  /** The identifier, declared in another file of the project, that `expected` uses. */
  name: string;
  usage: 'call' | 'member' | 'constructor' | 'type' | 'other';
  /** Paths inside the project of every file that declares `name` (never `path`). */
  definedIn: string[];
}

export interface CrossfileSet {
  version: 1;
  seed: number;
  packages: CrossfilePackage[];
  /** `<package name>/<path inside the project>` -> file text (UTF-8, `\n` line ends). */
  files: Record<string, string>;
  samples: CrossfileSample[];
}

/** Reads (gunzips and parses) the set; by default the one in this repository. */
export function readCrossfileSet(file: string = path.join(packageRoot(__dirname), CROSSFILE_SET)): CrossfileSet {
  const set = JSON.parse(gunzipSync(fs.readFileSync(file)).toString('utf8')) as CrossfileSet;
  if (set.version !== 1) throw new Error(`${file}: unknown cross-file set version ${String(set.version)}`);
  return set;
}

/** One project's files: path inside the project -> text. */
export function packageFiles(set: CrossfileSet, pkg: string | CrossfilePackage): Map<string, string> {
  const prefix = `${typeof pkg === 'string' ? pkg : pkg.name}/`;
  const out = new Map<string, string>();
  for (const [key, text] of Object.entries(set.files)) {
    if (key.startsWith(prefix)) out.set(key.slice(prefix.length), text);
  }
  return out;
}

/** The document as the user has it at the sample's cursor: the line cut there (the rest is the truth). */
export function documentAt(text: string, s: CrossfileSample): { text: string; line: number; character: number } {
  const lines = text.split('\n');
  const cut = [...lines.slice(0, s.line), lines[s.line].slice(0, s.character), ...lines.slice(s.line + 1)].join('\n');
  return { text: cut, line: s.line, character: s.character };
}
