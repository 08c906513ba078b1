import * as fs from 'node:fs';
import * as path from 'node:path';

/** Licences whose code we may read and quote in a committed sample. */
const PERMISSIVE = /^\(?(MIT|ISC|BSD-2-Clause|BSD-3-Clause|Apache-2\.0|0BSD|Python-2\.0|PSF-2\.0)\b/;

export interface CorpusFile {
  /** Where it was read from. */
  file: string;
  /** A short name for reports (package/relative path). */
  name: string;
  language: string;
}

/** Real code that is on this machine anyway: Debian's Python standard library and permissively licensed npm packages. */
export function offlineCorpus(root: string, perLanguage: Record<string, number>, random: () => number): CorpusFile[] {
  const out: CorpusFile[] = [];
  const python = fs
    .readdirSync('/usr/lib')
    .filter((d) => /^python3\.\d+$/.test(d))
    .sort()
    .at(-1);
  if (python) {
    const dir = path.join('/usr/lib', python);
    // Test folders hold files broken on purpose (bad syntax, odd encodings); site/dist-packages are not stdlib.
    const files = walk(dir, (p) => !/\/(test|tests|idle_test|site-packages|dist-packages|lib2to3)\//.test(`${p}/`), /\.py$/);
    out.push(...sample(files, perLanguage.python ?? 0, random).map((f) => ({ file: f, name: `${python}/${path.relative(dir, f)}`, language: 'python' })));
  }
  const modules = path.join(root, 'node_modules');
  const js: string[] = [];
  const ts: string[] = [];
  for (const pkg of packages(modules)) {
    const files = walk(pkg, (p) => !/\/(node_modules|test|tests|__tests__|fixtures)\//.test(`/${path.relative(pkg, p)}/`), /\.(m?js|cjs|ts)$/);
    for (const f of files) {
      if (/\.(min|bundle)\.js$|\.d\.ts$|\.d\.mts$/.test(f)) continue;
      (f.endsWith('.ts') ? ts : js).push(f);
    }
  }
  const named = (files: string[], language: string) =>
    sample(files, perLanguage[language] ?? 0, random).map((f) => ({ file: f, name: path.relative(modules, f), language }));
  out.push(...named(js, 'javascript'), ...named(ts, 'typescript'));
  return out;
}

/** Package folders (scoped ones included) whose package.json names a permissive licence. */
function packages(modules: string): string[] {
  const out: string[] = [];
  for (const name of fs.readdirSync(modules).sort()) {
    if (name.startsWith('.')) continue;
    const dirs = name.startsWith('@')
      ? fs
          .readdirSync(path.join(modules, name))
          .sort()
          .map((n) => path.join(modules, name, n))
      : [path.join(modules, name)];
    for (const dir of dirs) {
      try {
        const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { license?: unknown };
        if (typeof pkg.license === 'string' && PERMISSIVE.test(pkg.license)) out.push(dir);
      } catch {
        // not a package
      }
    }
  }
  return out;
}

/** Files under `dir` (sorted) matching `ext` that look like hand-written code: 1-60 KB, lines under 160 characters on average. */
function walk(dir: string, keep: (p: string) => boolean, ext: RegExp): string[] {
  const out: string[] = [];
  const visit = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (!keep(p)) continue;
      if (e.isDirectory()) visit(p);
      else if (e.isFile() && ext.test(e.name)) {
        const size = fs.statSync(p).size;
        if (size < 1000 || size > 60_000) continue;
        const text = fs.readFileSync(p, 'utf8');
        if (text.length / (text.split('\n').length || 1) < 160) out.push(p);
      }
    }
  };
  visit(dir);
  return out;
}

function sample(files: string[], n: number, random: () => number): string[] {
  const copy = [...files];
  const out: string[] = [];
  while (copy.length > 0 && out.length < n) out.push(copy.splice(Math.floor(random() * copy.length), 1)[0]);
  return out.sort();
}
