"""Make the external held-out eval set tools/model/eval/external.jsonl (+ external-manifest.json) from code the
default model never saw: permissively licensed npm packages and Debian python3-* packages that are not in the
training corpus (models/ghostline-code-small/licences.json, any split, used or not).

Sources (the lists are in tools/model/external-eval-packages.txt)
  - npm: the listed packages installed (with --ignore-scripts) in a scratch folder (--npm). Only the listed
    packages are sampled; every installed package, dependencies included, is checked against the corpus and one
    found there is never sampled (listed ones so found are excluded and reported). Licence from package.json.
  - Debian: the listed packages downloaded and unpacked without installing (--debian, one folder per package:
    `apt-get download` + `dpkg-deb -R`), their /usr/lib/python3/dist-packages sources. Licence from the `Files: *`
    stanza of usr/share/doc/<pkg>/copyright (or the list's licence= where that file is not machine-readable);
    files under another stanza whose licence is not permissive are skipped.
  `--prepare` does both installs from the list.

Files: .py / .js .mjs .cjs .jsx / .ts .tsx .mts .cts; no .d.ts, no tests or fixtures, no minified/generated
files (tools/model/corpus.py's checks), nothing over 200 KB, npm build folders only when a package has too few
other files, JS skipped where the package ships the TS it was compiled from, one copy of files that differ only
by build folder or module flavour (index.mjs / index.cjs), no exact duplicates, and no near-duplicates of the
corpus files present on this machine (Debian's Python stdlib and installed corpus python3-* packages; npm corpus
scratch folders with --corpus-npm): a file is dropped when half or more of its distinct lines of 20+ characters
are in one corpus file.

Samples (fixed seed; per language python / javascript / typescript 45% / 27.5% / 27.5%; an equal share per
package, at most --per-file per file; each package draws from its own seeded generator):
  - kind "mid-line" (60%): cursor at a random position inside a non-blank line, after at least one character
    past its indentation and before its last character; expected = the rest of that line (as make_eval.py, which
    also allows the cursor at the indentation).
  - kind "line-start" (40%): cursor at the end of the indentation of a non-blank line that has a letter or digit
    (not the first line), as after Enter and auto-indent; prefix ends with that indentation; expected = the line
    after its indentation.
  prefix = up to --prefix-chars characters before the cursor, starting at a line start; suffix = up to
  --suffix-chars characters after the end of the line (starting with its newline). Cursor lines are at most 200
  characters. Schema: {"path", "language", "prefix", "suffix", "expected", "kind", "package"}.

usage: /usr/bin/python3 -m tools.model.make_external_eval [--prepare] [--npm /tmp/heldout-npm]
           [--debian /tmp/heldout-deb] [--n 600] [--seed 2027] [--prefix-chars 1500]
The frozen test split tools/model/eval/frozen.jsonl (nothing is tuned on it) is made by the same script from
another list: --list tools/model/frozen-eval-packages.txt --out tools/model/eval/frozen.jsonl
--manifest tools/model/eval/frozen-manifest.json --npm /tmp/frozen-npm --debian /tmp/frozen-deb --seed 4049 --n 500
(tools/model/README.md).
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import random
import re
import subprocess
from collections import Counter, defaultdict

from . import HERE, REPO
from .corpus import (JS_EXT, NPM_BUILD_DIRS, PY_EXT, SKIP_DIRS, licence_ok, looks_generated_or_minified,
                     npm_sources, read_text)

LIST = os.path.join(HERE, "external-eval-packages.txt")
LICENCES = os.path.join(REPO, "models", "ghostline-code-small", "licences.json")
DIST = os.path.join("usr", "lib", "python3", "dist-packages")
STDLIB = "/usr/lib/python3.11"
STDLIB_SKIP = {"lib2to3", "idlelib", "turtledemo", "pydoc_data", "encodings", "config-3.11-x86_64-linux-gnu"}

TEST_DIRS = {"test", "tests", "__tests__", "testing", "fixtures", "__fixtures__", "testdata", "test_data",
             "__snapshots__", "__mocks__", "spec", "specs", "e2e"}
TEST_FILE = re.compile(r"(^test_.*\.py$|_test\.py$|^conftest\.py$|\.(test|spec|bench)\.[cm]?[jt]sx?$)")
TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
DECL_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
# folders dropped from a file's key when matching build copies of one source (dist/esm/x.js ~ src/x.ts)
KEY_DROP = NPM_BUILD_DIRS | {"src", "lib", "source", "esm", "es", "es6", "es2015", "es2017", "es2020", "esnext",
                             "module", "modules", "node", "commonjs", "mjs", "types", "out", "output"}
EXT_RANK = {".ts": 0, ".tsx": 0, ".mts": 1, ".cts": 2, ".mjs": 3, ".js": 4, ".jsx": 4, ".cjs": 5, ".py": 0}
LANG_SHARE = {"python": 0.45, "typescript": 0.275}  # javascript: the rest
LINE_START_SHARE = 0.4
MAX_LINE = 200

# Debian copyright short names -> SPDX
DEB_LICENCE = {"expat": "MIT", "mit": "MIT", "mit-style": "MIT", "mit/x11": "MIT", "x11": "MIT",
               "bsd-2-clause": "BSD-2-Clause", "bsd-3-clause": "BSD-3-Clause", "bsd-3": "BSD-3-Clause",
               "bsd": "BSD", "apache-2": "Apache-2.0", "apache-2.0": "Apache-2.0", "apache": "Apache-2.0",
               "isc": "ISC", "psf": "PSF-2.0", "psf-license": "PSF-2.0", "psf-2.0": "PSF-2.0",
               "public-domain": "public-domain", "cc0-1.0": "CC0-1.0", "zlib": "Zlib"}


# ------------------------------------------------------------------------------------------- lists

def read_list(path: str, sections: tuple = ("npm", "debian")) -> dict:
    """{"npm": [(spec, name, {})], "debian": [(name, name, {"licence": ...})]} from the package list (one key a
    section; make_crossfile_eval.py's list has one more)."""
    out = {s: [] for s in sections}
    section = None
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].strip()
        m = re.match(r"^\[(" + "|".join(map(re.escape, sections)) + r")\]$", line)
        if m:
            section = m.group(1)
            continue
        if not line:
            continue
        if section is None:
            raise SystemExit(f"{path}: '{line}' before a {' or '.join(f'[{s}]' for s in sections)} header")
        spec, *opts = line.split()
        kv = dict(o.split("=", 1) for o in opts)
        name = spec.rsplit("@", 1)[0] if spec.rfind("@") > 0 else spec
        out[section].append((spec, name, kv))
    return out


def corpus_names() -> set:
    names = set()
    for p in json.load(open(LICENCES, encoding="utf-8"))["packages"]:
        for n in p["package"].split(","):
            names.add(n.strip().lower())
    return names


def prepare(lists: dict, npm_dir: str, deb_dir: str):
    os.makedirs(npm_dir, exist_ok=True)
    pj = os.path.join(npm_dir, "package.json")
    if not os.path.exists(pj):
        with open(pj, "w") as f:
            f.write('{"name":"heldout","version":"1.0.0","private":true}\n')
    subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--legacy-peer-deps"] +
                   [spec for spec, _, _ in lists["npm"]], cwd=npm_dir, check=True)
    debs = os.path.join(deb_dir, "debs")
    os.makedirs(debs, exist_ok=True)
    subprocess.run(["apt-get", "download"] + [n for _, n, _ in lists["debian"]], cwd=debs, check=True)
    for fn in sorted(os.listdir(debs)):
        if fn.endswith(".deb"):
            pkg = fn.split("_")[0]
            subprocess.run(["dpkg-deb", "-R", os.path.join(debs, fn), os.path.join(deb_dir, pkg)], check=True)


# ------------------------------------------------------------------------------------------- files

def skip_path(rel: str) -> bool:
    parts = rel.split("/")
    if any(p in SKIP_DIRS or p in TEST_DIRS or p.startswith(".") for p in parts[:-1]):
        return True
    fn = parts[-1]
    return fn.endswith(DECL_SUFFIXES) or bool(TEST_FILE.search(fn))


def list_files(root: str, exts: dict) -> list:
    out = []
    for dp, dns, fns in os.walk(root):
        dns[:] = sorted(d for d in dns if d != "node_modules")
        for fn in sorted(fns):
            ext = os.path.splitext(fn)[1]
            if ext in exts:
                rel = os.path.relpath(os.path.join(dp, fn), root).replace(os.sep, "/")
                if not skip_path(rel):
                    out.append(rel)
    return out


def language(rel: str) -> str:
    if rel.endswith(".py"):
        return "python"
    return "typescript" if rel.endswith(TS_SUFFIXES) else "javascript"


def file_key(rel: str) -> str:
    """What build copies of one source share: folders less build/src names, name up to its first dot."""
    parts = rel.split("/")
    dirs = [p for p in parts[:-1] if p not in KEY_DROP]
    return "/".join(dirs + [parts[-1].split(".")[0]])


def usable(path: str, rel: str):
    text = read_text(path)
    if text is None:
        return None, "size/binary/encoding"
    why = looks_generated_or_minified(text, rel)
    if why:
        return None, why
    return text, None


def in_build_dir(rel: str) -> bool:
    return any(p in NPM_BUILD_DIRS or p.startswith(("dist.", "dist-", "build.", "build-"))
               for p in rel.split("/")[:-1])


def sources_first(root: str, rels: list, rejected: Counter, reader=None) -> list:
    """[(rel, text)] of the usable files among `rels`: those outside build folders, and the build folders' only when
    fewer than 3 sources are usable. `reader(path, rel)` gives (text, reason it is rejected or None); default
    `usable` (make_crossfile_eval.py passes its own)."""
    reader = reader or usable
    primary = [r for r in rels if not in_build_dir(r)]
    secondary = [r for r in rels if in_build_dir(r)]
    files = []
    for group in (primary, secondary):
        if group is secondary and len(files) >= 3:
            break
        for rel in group:
            text, why = reader(os.path.join(root, rel), rel)
            if why:
                rejected[why] += 1
                continue
            files.append((rel, text))
    return files


def npm_package_files(root: str, rejected: Counter) -> list:
    """[(rel, text)] of one npm package: sources first, build folders only when fewer than 3 sources are usable;
    one file per key (TS preferred). A package that ships TS keeps no JS from build folders nor JS named as
    one of its TS files (compiled output)."""
    rels = list_files(root, JS_EXT)
    ts_stems = {file_key(r).rsplit("/", 1)[-1] for r in rels if r.endswith(TS_SUFFIXES)}
    if ts_stems:
        kept = [r for r in rels if r.endswith(TS_SUFFIXES) or
                not (in_build_dir(r) or file_key(r).rsplit("/", 1)[-1] in ts_stems)]
        rejected["compiled-from-ts"] += len(rels) - len(kept)
        rels = kept
    files = sources_first(root, rels, rejected)
    best = {}
    for rel, text in files:
        k = file_key(rel)
        rank = (EXT_RANK.get(os.path.splitext(rel)[1], 9), len(rel), rel)
        if k in best:
            rejected["build-copy"] += 1
            if rank >= best[k][0]:
                continue
        best[k] = (rank, rel, text)
    return sorted(((rel, text) for _, rel, text in best.values()), key=lambda f: f[0])


def parse_copyright(path: str):
    """(Files: * licence or None, [(patterns, licence)] of the other non-debian stanzas)."""
    if not os.path.exists(path):
        return None, []
    txt = open(path, encoding="utf-8", errors="replace").read()
    star, others = None, []
    for block in re.split(r"\n\s*\n", txt):
        fm = re.search(r"^Files:\s*(.+(?:\n[ \t]+.+)*)", block, re.M)
        lm = re.search(r"^License:\s*(.+)$", block, re.M)
        if not fm or not lm:
            continue
        pats = fm.group(1).split()
        lic = lm.group(1).strip()
        if pats == ["*"]:
            star = lic
        elif not all(p.startswith("debian/") for p in pats):
            others.append((pats, lic))
    return star, others


def spdx(lic: str) -> str:
    return " OR ".join(DEB_LICENCE.get(p.strip().lower(), p.strip()) for p in re.split(r"\s+or\s+", lic, flags=re.I))


def debian_package(folder: str, name: str, override: str | None, rejected: Counter, reader=None):
    """(version, licence, [(rel, text)], note) of one unpacked Debian package. `reader(path, rel)` gives
    (text, reason it is rejected or None); default `usable` (make_crossfile_eval.py passes its own)."""
    reader = reader or usable
    version = None
    ctl = os.path.join(folder, "DEBIAN", "control")
    if os.path.exists(ctl):
        m = re.search(r"^Version:\s*(\S+)", open(ctl, encoding="utf-8").read(), re.M)
        version = m.group(1) if m else None
    star, others = parse_copyright(os.path.join(folder, "usr", "share", "doc", name, "copyright"))
    lic = override or (spdx(star) if star else None)
    root = os.path.join(folder, DIST)
    bad = [pats for pats, l in others if not licence_ok(spdx(l))]
    files = []
    for rel in list_files(root, PY_EXT) if os.path.isdir(root) else []:
        if any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, "*/" + p) or rel.endswith("/" + p.split("/", 1)[-1])
               for pats in bad for p in pats):
            rejected["other-licence-stanza"] += 1
            continue
        text, why = reader(os.path.join(root, rel), rel)
        if why:
            rejected[why] += 1
            continue
        files.append((rel, text))
    note = f"copyright Files: * = {star!r}" + (f"; licence from the list ({override})" if override else "")
    return version, lic, files, note


# ------------------------------------------------------------------------------------------- near-duplicates

def norm_lines(text: str) -> set:
    out = set()
    for line in text.split("\n"):
        s = " ".join(line.split())
        if len(s) >= 20:
            out.add(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest())
    return out


class Reference:
    """Corpus files present on this machine: their content hashes and, for each line of 20+ characters, the
    files that have it."""

    def __init__(self):
        self.lines, self.files, self.nfiles, self.sources = {}, set(), 0, []

    def add_text(self, text: str):
        self.files.add(hashlib.sha1(text.encode("utf-8")).digest())
        fid = self.nfiles
        self.nfiles += 1
        for h in norm_lines(text):
            have = self.lines.get(h)
            if have is None:
                self.lines[h] = fid
            elif isinstance(have, int):
                if have != fid:
                    self.lines[h] = [have, fid]
            else:
                have.append(fid)

    def add_tree(self, root: str, exts: dict, skip=frozenset()):
        for dp, dns, fns in os.walk(root):
            dns[:] = sorted(d for d in dns if d not in SKIP_DIRS and d not in skip and not d.startswith("."))
            for fn in sorted(fns):
                if os.path.splitext(fn)[1] in exts:
                    text = read_text(os.path.join(dp, fn))
                    if text is not None:
                        self.add_text(text)

    def near_dup(self, text: str) -> str | None:
        """An exact copy of a corpus file, or half or more of its distinct long lines in one corpus file."""
        if hashlib.sha1(text.encode("utf-8")).digest() in self.files:
            return "corpus-exact"
        ls = norm_lines(text)
        if len(ls) < 5:
            return None
        hits = Counter()
        for h in ls:
            have = self.lines.get(h)
            if have is not None:
                hits.update([have] if isinstance(have, int) else have)
        if hits and max(hits.values()) * 2 >= len(ls):
            return "corpus-near-duplicate"
        return None


def python_reference(ref: Reference, corpus: set):
    if os.path.isdir(STDLIB):
        ref.add_tree(STDLIB, PY_EXT, STDLIB_SKIP)
        ref.sources.append(STDLIB)
    dist = "/" + DIST
    for pkg in sorted(n for n in corpus if n.startswith("python3-")):
        r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
        if r.returncode != 0:
            continue
        n = 0
        for path in sorted(r.stdout.split("\n")):
            if path.startswith(dist + "/") and path.endswith(".py") and os.path.isfile(path):
                if any(p in SKIP_DIRS for p in os.path.relpath(path, dist).split("/")[:-1]):
                    continue
                text = read_text(path)
                if text is not None:
                    ref.add_text(text)
                    n += 1
        if n:
            ref.sources.append(pkg)


# ------------------------------------------------------------------------------------------- sampling

def cut_prefix(text: str, cur: int, n: int) -> int:
    """Start of the prefix: cur - n, moved on to the next line start when that is before the cursor."""
    start = max(0, cur - n)
    if start > 0 and text[start - 1] != "\n":
        nl = text.find("\n", start, cur)
        if nl >= 0:
            start = nl + 1
    return start


def candidates(text: str):
    """[(line start offset, line)] of the lines a cursor may be put on."""
    out, off = [], 0
    for i, line in enumerate(text.split("\n")):
        if line.strip() and len(line) <= MAX_LINE and len(line.strip()) >= 2 and "sourceMappingURL" not in line:
            out.append((i, off, line))
        off += len(line) + 1
    return out


def draw(rng: random.Random, text: str, cands: list, kind: str, a) -> dict | None:
    pool = [c for c in cands if c[0] > 0 and re.search(r"\w", c[2])] if kind == "line-start" else cands
    if not pool:
        return None
    i, off, line = rng.choice(pool)
    indent = len(line) - len(line.lstrip())
    if kind == "line-start":
        c = indent
    else:
        if len(line.rstrip()) - 1 < indent + 1:
            return None
        c = rng.randint(indent + 1, len(line.rstrip()) - 1)  # at the indentation is line-start's case
    expected = line[c:]
    if not expected.strip():
        return None
    cur, end = off + c, off + len(line)
    p0 = cut_prefix(text, cur, a.prefix_chars)
    s = {"prefix": text[p0:cur], "suffix": text[end:end + a.suffix_chars], "expected": expected, "kind": kind}
    assert s["prefix"] + s["expected"] + s["suffix"] == text[p0:end + len(s["suffix"])]
    return s


def allocate(quota: int, caps: dict) -> dict:
    """An equal share of quota per package (one at a time round the sorted names), less where a package's
    capacity is smaller."""
    share = {p: 0 for p in caps}
    left = quota
    while left > 0:
        open_ = [p for p in sorted(caps) if share[p] < caps[p]]
        if not open_:
            break
        for p in open_[:left]:
            share[p] += 1
        left = quota - sum(share.values())
    return share


def kinds_for(n: int, offset: int) -> list:
    """n kinds continuing a language's running 40/60 sequence (so each package gets about 40% line-start)."""
    return ["line-start" if int((offset + k + 1) * LINE_START_SHARE) > int((offset + k) * LINE_START_SHARE)
            else "mid-line" for k in range(n)]


def sample_package(pkg: dict, lang: str, n: int, kinds: list, a) -> list:
    rng = random.Random(f"{a.seed}:{pkg['source']}:{pkg['name']}:{lang}")
    files = [(rel, text) for rel, text in pkg["files"] if language(rel) == lang]
    files = [(rel, text, candidates(text)) for rel, text in files]
    files = [f for f in files if f[2]]
    rng.shuffle(files)
    per_file = Counter()
    out = []
    tries = 0
    while len(out) < n and tries < 200 * n:
        rel, text, cands = files[tries % len(files)]
        tries += 1
        if per_file[rel] >= a.per_file:
            continue
        s = draw(rng, text, cands, kinds[len(out)], a)
        if s is None:
            continue
        s = {"path": f"{pkg['name']}/{rel}", "language": lang, **s, "package": pkg["name"]}
        if any(s["path"] == o["path"] and s["prefix"] == o["prefix"] for o in out):
            continue
        out.append(s)
        per_file[rel] += 1
    return out


# ------------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", default=LIST)
    ap.add_argument("--npm", default="/tmp/heldout-npm", help="npm scratch folder (node_modules inside)")
    ap.add_argument("--debian", default="/tmp/heldout-deb", help="folder of unpacked .debs, one per package")
    ap.add_argument("--prepare", action="store_true", help="install the lists into --npm and --debian first")
    ap.add_argument("--corpus-npm", nargs="*", default=[],
                    help="the corpus' npm scratch folders, when present, for the near-duplicate check")
    ap.add_argument("--out", default=os.path.join(HERE, "eval", "external.jsonl"))
    ap.add_argument("--manifest", default=os.path.join(HERE, "eval", "external-manifest.json"))
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--prefix-chars", type=int, default=1500)
    ap.add_argument("--suffix-chars", type=int, default=500)
    ap.add_argument("--per-file", type=int, default=3, help="samples per file at most")
    ap.add_argument("--per-package", type=int, default=25, help="samples per package and language at most")
    a = ap.parse_args()

    lists = read_list(a.list)
    if a.prepare:
        prepare(lists, a.npm, a.debian)
    corpus = corpus_names()
    rejected = Counter()
    excluded = []
    packages = []

    ref = Reference()
    python_reference(ref, corpus)
    for d in a.corpus_npm:
        ref.add_tree(os.path.join(d, "node_modules"), JS_EXT)
        ref.sources.append(d)

    # npm: every installed package checked, the listed ones sampled
    installed = {}
    for s in npm_sources(a.npm):
        installed.setdefault(s["package"], []).append(s)
    listed = {name for _, name, _ in lists["npm"]}
    deps_in_corpus = sorted(n for n in installed if n not in listed and n.lower() in corpus)
    deps_other = sorted(n for n in installed if n not in listed and n.lower() not in corpus)
    for spec, name, kv in lists["npm"]:
        if name.lower() in corpus:
            excluded.append({"name": name, "source": "npm", "reason": "in the training corpus (licences.json)"})
            continue
        if name not in installed:
            excluded.append({"name": name, "source": "npm", "reason": f"not installed in {a.npm}"})
            continue
        src = sorted(installed[name], key=lambda s: len(s["root"]))[0]  # the top-level copy
        lic = str(src["licence"])
        if not licence_ok(lic):
            excluded.append({"name": name, "source": "npm", "version": src["version"], "licence": lic,
                             "reason": "licence not in the permissive allow-list"})
            continue
        packages.append({"name": name, "version": src["version"], "source": "npm", "licence": lic,
                         "files": npm_package_files(src["root"], rejected)})

    for _, name, kv in lists["debian"]:
        if name.lower() in corpus:
            excluded.append({"name": name, "source": "debian", "reason": "in the training corpus (licences.json)"})
            continue
        folder = os.path.join(a.debian, name)
        if not os.path.isdir(folder):
            excluded.append({"name": name, "source": "debian", "reason": f"not unpacked in {a.debian}"})
            continue
        version, lic, files, note = debian_package(folder, name, kv.get("licence"), rejected)
        if not lic or not licence_ok(lic):
            excluded.append({"name": name, "source": "debian", "version": version, "licence": lic,
                             "reason": f"licence not in the permissive allow-list ({note})"})
            continue
        packages.append({"name": name, "version": version, "source": "debian", "licence": lic, "files": files,
                         "licence_note": note})

    # exact duplicates among the eval files, near-duplicates of the corpus
    seen = set()
    for pkg in sorted(packages, key=lambda p: (p["source"], p["name"])):
        kept = []
        for rel, text in pkg["files"]:
            h = hashlib.sha1(text.encode("utf-8")).digest()
            why = "duplicate" if h in seen else ref.near_dup(text)
            if why:
                rejected[why] += 1
                pkg.setdefault("dropped", Counter())[why] += 1
                continue
            seen.add(h)
            kept.append((rel, text))
        pkg["files"] = kept
    for pkg in packages:
        if not pkg["files"]:
            excluded.append({"name": pkg["name"], "source": pkg["source"], "version": pkg["version"],
                             "licence": pkg["licence"], "reason": "no usable source files" +
                             (f" (dropped: {dict(pkg['dropped'])})" if pkg.get("dropped") else "")})
    packages = sorted((p for p in packages if p["files"]), key=lambda p: (p["source"], p["name"]))

    quota = {lang: int(a.n * share) for lang, share in LANG_SHARE.items()}
    quota["javascript"] = a.n - sum(quota.values())
    samples = []
    got = defaultdict(lambda: Counter())
    for lang in ("python", "javascript", "typescript"):
        pk = [p for p in packages if any(language(r) == lang for r, _ in p["files"])]
        caps = {p["name"]: min(a.per_package, a.per_file * sum(language(r) == lang for r, _ in p["files"]))
                for p in pk}
        share = allocate(quota[lang], caps)
        lang_samples = []
        for p in pk:  # sorted by (source, name)
            n = share[p["name"]]
            if n:
                s = sample_package(p, lang, n, kinds_for(n, len(lang_samples)), a)
                lang_samples += s
                got[p["name"]][lang] += len(s)
        samples += lang_samples
        if len(lang_samples) < quota[lang]:
            print(f"warning: {lang}: {len(lang_samples)} samples of {quota[lang]}")

    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        for s in samples:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")

    per_pkg_files = defaultdict(set)
    for s in samples:
        per_pkg_files[s["package"]].add(s["path"])
    entries = []
    for p in packages:
        langs = Counter(language(r) for r, _ in p["files"])
        e = {"name": p["name"], "version": p["version"], "source": p["source"], "licence": p["licence"],
             "files_usable": len(p["files"]), "languages": dict(sorted(langs.items())),
             "files_sampled": len(per_pkg_files[p["name"]]), "samples": sum(got[p["name"]].values())}
        if p.get("licence_note"):
            e["licence_note"] = p["licence_note"]
        if p.get("dropped"):
            e["files_dropped"] = dict(sorted(p["dropped"].items()))
        entries.append(e)
    source = {p["name"]: p["source"] for p in packages}
    summary = {
        "samples": len(samples),
        "by_language": dict(sorted(Counter(s["language"] for s in samples).items())),
        "by_kind": dict(sorted(Counter(s["kind"] for s in samples).items())),
        "by_source": dict(sorted(Counter(source[s["package"]] for s in samples).items())),
        "packages": {"npm": sum(e["source"] == "npm" and e["samples"] > 0 for e in entries),
                     "debian": sum(e["source"] == "debian" and e["samples"] > 0 for e in entries)},
        "options": {"n": a.n, "seed": a.seed, "prefix_chars": a.prefix_chars, "suffix_chars": a.suffix_chars,
                    "per_file": a.per_file, "per_package": a.per_package},
        "corpus_check": {"names": os.path.relpath(LICENCES, REPO), "near_duplicate_reference": ref.sources,
                         "reference_files": ref.nfiles},
        "files_rejected": dict(sorted(rejected.items())),
    }
    manifest = {"summary": summary, "packages": entries,
                "excluded": sorted(excluded, key=lambda e: (e["source"], e["name"])),
                "npm_dependencies": {"in_corpus_never_sampled": deps_in_corpus, "not_sampled": deps_other}}
    with open(a.manifest, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")

    print(f"{len(samples)} samples -> {a.out} ({os.path.getsize(a.out) / 1e3:.0f} KB); manifest {a.manifest}")
    print(json.dumps({k: summary[k] for k in ("by_language", "by_kind", "packages", "files_rejected")}))
    kinds = Counter((s["language"], s["kind"]) for s in samples)
    print("language x kind:", {f"{l}/{k}": v for (l, k), v in sorted(kinds.items())})
    print("per package:", ", ".join(f"{e['name']}={e['samples']}" for e in entries))
    for e in manifest["excluded"]:
        print(f"excluded {e['source']} {e['name']}: {e['reason']}")


if __name__ == "__main__":
    main()
