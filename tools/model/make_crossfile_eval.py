"""Make the FROZEN cross-file eval set tools/model/eval/crossfile.json.gz (+ crossfile-manifest.json): cursor
positions where the true completion uses a name declared in ANOTHER file of the same project, with the project's
source files alongside, to measure whether the prompt holds that declaration. Nothing is tuned on it.

Sources (listed in tools/model/crossfile-eval-packages.txt): permissively licensed multi-file projects that are in
neither the training corpus (models/ghostline-code-small/licences.json, any split, used or not) nor
external-eval-packages.txt, frozen-eval-packages.txt or corpus-npm-packages.txt (all checked again here, by name):
  - [npm]: packages that ship TypeScript sources or modern ESM JavaScript as files importing each other, installed
    (--ignore-scripts --legacy-peer-deps) in a scratch folder (--npm). Only the listed packages are used; the
    dependencies installed with them are checked against the corpus and reported, never used as code. Licence
    from package.json. [npm-types]: packages installed beside them only for the names their .d.ts declare (peer
    dependencies that --legacy-peer-deps leaves out), never used as code.
  - [debian]: bookworm python3-* packages downloaded and unpacked, not installed (--debian: `apt-get download` +
    `dpkg-deb -R`), their /usr/lib/python3/dist-packages tree. Licence as make_external_eval.py reads it (the
    `Files: *` stanza, or the list's licence=; files under a non-permissive stanza are left out).
  `--prepare` does both into the scratch folders under /tmp (unpacking afresh when run again).

Files ("files" of the set, keyed "<package>/<path inside the project>"): the package's own layout (npm: the path
inside the npm package, e.g. src/x.ts or dist/esm/x.js; Debian: the path under dist-packages, so the top-level
Python package folder is kept and `from pkg.mod import x` resolves from the project root). Only .ts .tsx .mts
.cts / .js .mjs .jsx / .py; no .d.ts; no tests or fixtures (make_external_eval.py's folder and file-name rules,
and modules named test.py / tests.py); nothing over 200 KB, binary or not UTF-8 (small files are kept: a project's
tiny modules belong to its tree); no minified or generated files (corpus.py's checks, its ratio checks only on
files of 200+ bytes; and by name: *_pb.js, *_pb2.py, *.pb.*, *.generated.*, folders generated/ __generated__/).
An npm package that ships 3+ TypeScript files keeps only those (language "typescript"), otherwise its JavaScript
(language "javascript"): sources first, build folders only when fewer than 3 sources are usable, one copy of a
module that a package builds into several folders (ESM before CommonJS, then make_external_eval's order). Left
out too: files that copy a corpus file present on this machine (Debian's Python stdlib and the installed corpus
python3-* packages, make_external_eval.Reference: an exact copy, or half or more of a file's long lines in one
corpus file; files under 200 bytes are not compared, the corpus has none) and exact copies of another package's
file. A file that imports (relative or package imports, resolved by this script against every file of the
package, tests, vendored copies and .d.ts included) a file the set leaves out is never sampled.
Cap per package --package-cap bytes (400 KB), about --total-cap in all (4 MB): kept first are the sampled files,
every file a sample's definedIn names, the files a sampled file imports and, for Python, the __init__.py of each
kept folder; the others are added nearest first (folder distance to a sampled file, then path) while they fit
(the per-package limit is lowered alike for all packages until the total fits; the files above are always kept).

Declaration index (per package, from the files themselves; no import resolver of the extension's):
  - TS/JS (a small lexer blanks comments, strings, template text and regex literals; then regexes and bracket
    matching): top-level (brace and paren depth 0) `function`, `function*`, `class`, `interface`, `type X =` /
    `type X<`, `enum`, `namespace`, `const`/`let`/`var` (exported or not, every declarator of a list; not
    destructuring and not `= require(...)` / `= await import(...)`; `export default function/class Name` too),
    and members of class bodies (methods, getters/setters, fields, constructor parameter properties, `this.x =`
    inside the class); `#private` members are left out.
  - Python (ast): module-level `def`, `async def`, `class`, `NAME = ...` / `NAME: T = ...` (also inside
    module-level if/try/with blocks, tuple targets included), and the methods (`def`) of those classes.
  A file's own names ("declared in the current file"): every declaration keyword anywhere (any depth, every
  declarator, destructuring patterns), parameters (functions, methods, arrows, catch, method signatures of
  interfaces and classes, declared functions; TS: type parameters of declarations), class and interface members,
  type-literal members (`name?:` anywhere, the members of a parameter's `{ ... }`, of `type X = { ... }`), methods
  `name(...) {` (object literals' too), `NAME = ...` at a statement start and `x.NAME = ...` (any object);
  Python: every name bound anywhere (def/class names, arguments, assignment/for/with/except/comprehension/walrus/
  match targets, global/nonlocal) and every attribute assigned (`x.NAME = ...`). Import statements bind nothing.

Sampling rules (seed --seed, default 4242; everything sorted, one seeded generator per package):
  - A position qualifies when the true text after the cursor (to the end of the line) holds an identifier `name`
    of --min-name (4) characters or more that is not a keyword, builtin or standard-library / node_modules name
    (TS/JS: the names declared in TypeScript's lib*.d.ts and @types/node from this repository's node_modules, and
    in the .d.ts files of the package's own npm dependencies and peer dependencies; Python: builtins, methods of
    builtin types, standard-library module names, and the names and class members of the common standard-library
    modules in STD_PY_MODULES), not a dunder, not imported in the current file from outside the project (TS/JS: a
    bare module specifier; Python: an absolute import of a module outside the project's top-level packages),
    declared in at least one OTHER file of the package (the index above) and nowhere in the current file (its own
    names above). `definedIn` lists all the files that declare it; names declared in more than --max-definers (3)
    files are left out.
  - Never inside import statements, export-from statements or `export { ... }` lists, comments, strings,
    docstrings or template literals (their `${...}` too); never on lines over 200 characters; TS/JS: not a key or
    label (`name:`, but `a ? name : b` and `case name:` are kept); Python: not a keyword argument (`name=` inside
    brackets); never in .tsx/.jsx files (kept in the tree only); never in a file that fails to parse (Python).
  - kind "at-name" (70%, --line-start-share 0.3): cursor right before the occurrence (expected starts with the
    name); kind "line-start" (30%): cursor after the line's indentation (not the file's first line, not inside a
    multi-line string, comment or template), expected = the line after its indentation, name = the line's first
    qualifying name.
  - usage (the first that applies): "constructor" for `new Name(` / `new a.Name(` (TS/JS) or, in Python, a name
    that the index knows as a class followed by `(`; "member" when preceded by `.`; "call" when `(` follows;
    "type" in a TypeScript type position: after `extends`, `implements`, `as`, `satisfies`, `<` with no space
    before it, at the start of a type alias's right side, or after the `:` of a parameter, return, variable or
    class/interface member annotation; else "other".
  - --n (400) samples, half TS/JS (npm) and half Python (Debian), an equal share per package of each half (one
    at a time round the sorted names, less where a dry run finds fewer positions), at most --per-file (3) per
    file, at most --per-name (2) per name per package, at most one per (file, line, column); where a package
    still falls short, the others of its half give one more each, in turn (sampled afresh). Within a package the
    files with positions are shuffled and visited in turn, one sample per visit (a random qualifying position of
    the kind wanted), skipping a position whose required files (see Files) would take the package's required
    files past 80% of --package-cap.
  - line/character: 0-based, character in UTF-16 code units; file texts are UTF-8 with "\\n" line ends.

usage: /usr/bin/python3 -m tools.model.make_crossfile_eval [--prepare] [--npm /tmp/crossfile-npm]
           [--debian /tmp/crossfile-deb] [--n 400] [--seed 4242]
Reader: bench/context/crossfileSet.ts (readCrossfileSet, packageFiles).
"""
from __future__ import annotations

import argparse
import ast
import builtins
import fnmatch
import gzip
import hashlib
import importlib
import io
import json
import keyword
import os
import posixpath
import random
import re
import shutil
import subprocess
import sys
import tokenize
from collections import Counter, defaultdict

from . import HERE, REPO
from .corpus import JS_EXT, MAX_FILE_BYTES, PY_EXT, licence_ok, looks_generated_or_minified, npm_sources
from .make_external_eval import (DIST, EXT_RANK, LICENCES, Reference, corpus_names, debian_package, file_key,
                                 in_build_dir, list_files, python_reference, sources_first)
from .make_external_eval import read_list as external_read_list

LIST = os.path.join(HERE, "crossfile-eval-packages.txt")
OTHER_LISTS = [os.path.join(HERE, n) for n in ("external-eval-packages.txt", "frozen-eval-packages.txt")]
CORPUS_NPM_LIST = os.path.join(HERE, "corpus-npm-packages.txt")
OUT = os.path.join(HERE, "eval", "crossfile.json.gz")
MANIFEST = os.path.join(HERE, "eval", "crossfile-manifest.json")
TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
JSX_SUFFIXES = (".tsx", ".jsx")
SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".jsx", ".py")
CJS_DIRS = {"cjs", "_cjs", "commonjs", "node-cjs", "cjs-node"}
MAX_LINE = 200
IDENT = r"[A-Za-z_$][\w$]*"

# ------------------------------------------------------------------------------------------- names left out

JS_KEYWORDS = set("""
break case catch class const continue debugger default delete do else enum export extends false finally for
function if import in instanceof new null return super switch this throw true try typeof var void while with
yield let static implements interface package private protected public await async of get set type declare
readonly abstract namespace module keyof infer is asserts any unknown never object string number boolean symbol
bigint undefined constructor satisfies accessor override global require exports arguments prototype
""".split())

# the standard-library modules whose names (and class members) are never a cross-file name
STD_PY_MODULES = """
abc argparse array ast asyncio base64 binascii bisect builtins calendar codecs collections collections.abc
concurrent.futures configparser contextlib contextvars copy csv dataclasses datetime decimal difflib dis email
email.message email.utils enum errno fnmatch fractions functools gc getpass gettext glob gzip hashlib heapq hmac
html html.parser http http.client http.cookies http.server importlib importlib.metadata importlib.resources
inspect io ipaddress itertools json keyword linecache locale logging logging.handlers math mimetypes numbers
operator os os.path pathlib pickle pkgutil platform pprint queue random re reprlib secrets select shlex shutil
signal socket ssl stat string struct subprocess sys tempfile textwrap threading time timeit token tokenize
traceback types typing unicodedata unittest unittest.mock urllib urllib.parse urllib.request uuid warnings
weakref xml.dom.minidom xml.etree.ElementTree zipfile zlib
""".split()


def python_std_names() -> set:
    names = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | set(sys.stdlib_module_names)
    for t in (str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float, complex, bool, object,
              BaseException, type, memoryview, range, slice, property, staticmethod, classmethod):
        names.update(dir(t))
    for modname in STD_PY_MODULES:
        try:
            mod = importlib.import_module(modname)
        except Exception:
            continue
        for n in dir(mod):
            names.add(n)
            obj = getattr(mod, n, None)
            if isinstance(obj, type):
                names.update(dir(obj))
    names.update({"self", "cls", "args", "kwargs"})
    return names


def strip_js_comments(text: str) -> str:
    """Comments out of a .d.ts file (strings are left: declaration files have few)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"(^|[^:])//[^\n]*", r"\1", text)


DTS_DECL = re.compile(r"\b(?:interface|class|type|enum|namespace|module|function|var|let|const)\s+(" + IDENT + ")")
DTS_MEMBER = re.compile(r"^\s*(?:(?:readonly|static|abstract|get|set|protected|public|private|declare)\s+)*(" +
                        IDENT + r")\??\s*[:(<]")


def dts_names(text: str) -> set:
    """Names a declaration file declares: declarations, and members (lines ending with ; ( or {)."""
    text = strip_js_comments(text)
    out = set(DTS_DECL.findall(text))
    for line in text.split("\n"):
        s = line.rstrip()
        if s.endswith((";", "(", "{")):
            m = DTS_MEMBER.match(line)
            if m:
                out.add(m.group(1))
    return out


def dts_tree_names(root: str, skip_nested_node_modules=True) -> tuple:
    names, nfiles = set(), 0
    for dp, dns, fns in os.walk(root):
        dns[:] = sorted(d for d in dns if not (skip_nested_node_modules and d == "node_modules"))
        for fn in sorted(fns):
            if fn.endswith((".d.ts", ".d.mts", ".d.cts")):
                try:
                    with open(os.path.join(dp, fn), encoding="utf-8", errors="replace") as f:
                        names |= dts_names(f.read(3_000_000))
                    nfiles += 1
                except OSError:
                    pass
    return names, nfiles


def js_std_names() -> tuple:
    """Names declared by TypeScript's lib*.d.ts and @types/node (this repository's node_modules)."""
    nm = os.path.join(REPO, "node_modules")
    names, info = set(JS_KEYWORDS), {}
    lib = os.path.join(nm, "typescript", "lib")
    n = 0
    for fn in sorted(os.listdir(lib)) if os.path.isdir(lib) else []:
        if fn.startswith("lib") and fn.endswith(".d.ts"):
            with open(os.path.join(lib, fn), encoding="utf-8") as f:
                names |= dts_names(f.read())
            n += 1
    info["typescript"] = {"version": pkg_version(os.path.join(nm, "typescript")), "files": n}
    node_names, nn = dts_tree_names(os.path.join(nm, "@types", "node"))
    names |= node_names
    info["@types/node"] = {"version": pkg_version(os.path.join(nm, "@types", "node")), "files": nn}
    if n == 0 or nn == 0:
        raise SystemExit("typescript/lib or @types/node missing from node_modules: run `npm ci` first")
    return names, info


def pkg_version(folder: str) -> str | None:
    try:
        return json.load(open(os.path.join(folder, "package.json"), encoding="utf-8")).get("version")
    except OSError:
        return None


def npm_dependency_names(npm_root: str, pkg_root: str) -> tuple:
    """Names declared in the .d.ts files of a package's installed dependencies (and peer dependencies)."""
    pj = json.load(open(os.path.join(pkg_root, "package.json"), encoding="utf-8"))
    deps = sorted(set(pj.get("dependencies") or {}) | set(pj.get("peerDependencies") or {}) |
                  set(pj.get("optionalDependencies") or {}))
    names, found = set(), []
    for d in deps:
        for base in (os.path.join(pkg_root, "node_modules"), os.path.join(npm_root, "node_modules")):
            p = os.path.join(base, d)
            if os.path.isdir(p):
                ns, nf = dts_tree_names(p)
                names |= ns
                found.append(f"{d}@{pkg_version(p)}")
                types = os.path.join(npm_root, "node_modules", "@types", d.replace("@", "").replace("/", "__"))
                if os.path.isdir(types):
                    names |= dts_tree_names(types)[0]
                break
    return names, found


# ------------------------------------------------------------------------------------------- JS / TS lexing

REGEX_BEFORE_WORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
                      "instanceof", "yield", "await"}


def blank_js(text: str, spans: list | None = None) -> str:
    """text with comments, string and template-literal contents and regex literals replaced by spaces (newlines
    and quotes kept, `${` ... `}` of templates kept as code), so that positions are unchanged. spans, when given,
    gets the (start, end) of every template literal, substitutions included."""
    out = list(text)
    n = len(text)
    i = 0
    tpl = []  # brace counters, one per open substitution
    opened = []  # start of each open template literal
    in_tpl_text = False
    prev_sig, prev_word = "", ""

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if in_tpl_text:
            if c == "\\":
                blank(i, min(n, i + 2))
                i += 2
                continue
            if c == "`":
                in_tpl_text = False
                if spans is not None and opened:
                    spans.append((opened.pop(), i + 1))
                prev_sig, prev_word = "`", ""
                i += 1
                continue
            if c == "$" and i + 1 < n and text[i + 1] == "{":
                tpl.append(0)
                in_tpl_text = False
                prev_sig, prev_word = "{", ""
                i += 2
                continue
            if c != "\n":
                out[i] = " "
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
            prev_sig, prev_word = c, ""
            continue
        if c == "`":
            in_tpl_text = True
            opened.append(i)
            i += 1
            continue
        if c == "/":
            if prev_sig == "" or prev_sig in "(,=:[!&|?{};+-*%<>~^" or prev_word in REGEX_BEFORE_WORDS:
                j, cls = i + 1, False
                while j < n and text[j] != "\n":
                    ch = text[j]
                    if ch == "\\":
                        j += 2
                        continue
                    if ch == "[":
                        cls = True
                    elif ch == "]":
                        cls = False
                    elif ch == "/" and not cls:
                        break
                    j += 1
                if j < n and text[j] == "/":
                    blank(i + 1, j)
                    j += 1
                    while j < n and (text[j].isalnum()):
                        j += 1
                    i = j
                    prev_sig, prev_word = "/", ""
                    continue
            prev_sig, prev_word = "/", ""
            i += 1
            continue
        if tpl:
            if c == "{":
                tpl[-1] += 1
            elif c == "}":
                if tpl[-1] == 0:
                    tpl.pop()
                    in_tpl_text = True
                    i += 1
                    continue
                tpl[-1] -= 1
        if c.isalnum() or c in "_$":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            prev_word = text[i:j]
            prev_sig = text[j - 1]
            i = j
            continue
        if not c.isspace():
            prev_sig, prev_word = c, ""
        i += 1
    return "".join(out)


class JsFile:
    """One TS/JS file: blanked code, brackets, declarations, own names, import ranges."""

    def __init__(self, rel: str, text: str):
        self.rel, self.text = rel, text
        self.ts = rel.endswith(TS_SUFFIXES)
        self.templates = []
        self.code = code = blank_js(text, self.templates)
        self.templates.sort()
        n = len(code)
        self.match = {}
        self.depth = [0] * (n + 1)  # brace depth before each char
        self.pdepth = [0] * (n + 1)  # paren + bracket depth before each char
        self.opener = [-1] * (n + 1)  # innermost open bracket's position before each char
        stack = []
        bd = pd = 0
        for i, c in enumerate(code):
            self.depth[i], self.pdepth[i] = bd, pd
            self.opener[i] = stack[-1] if stack else -1
            if c in "{([":
                stack.append(i)
                if c == "{":
                    bd += 1
                else:
                    pd += 1
            elif c in "})]":
                if stack:
                    o = stack.pop()
                    self.match[o] = i
                if c == "}":
                    bd = max(0, bd - 1)
                else:
                    pd = max(0, pd - 1)
        self.depth[n], self.pdepth[n] = bd, pd
        self.line_starts = [0]
        for i, c in enumerate(text):
            if c == "\n":
                self.line_starts.append(i + 1)
        self.params = set()  # positions of '(' that open a parameter list
        self.bodies = {}  # position of '{' of a class / interface body -> "class" | "interface"
        self.decls = {}  # name -> "class" | "function" | "value" | "type" | "member" (the index)
        self.own = set()  # names declared anywhere in the file
        self._scan()
        self.import_lines = self._import_lines()
        self.ext = set()  # names imported from outside the project (a bare module specifier)
        for m in re.finditer(r"""\bimport\s+(?:type\s+)?([\w$\s{},*]*?)\s*\bfrom\s*['"]([^'"]+)['"]""", text):
            if not m.group(2).startswith("."):
                self.ext |= set(re.findall(IDENT, m.group(1))) - {"type", "as"}

    # --------------------------------------------------------------------------------- helpers
    def line_of(self, pos: int) -> int:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _pattern_names(self, a: int, b: int) -> set:
        return set(re.findall(r"(?<![\w$.#])" + IDENT, self.code[a:b]))

    def _param_names(self, a: int, b: int) -> set:
        """Binding names of the parameter list code[a:b] (inside the parentheses)."""
        out, seg_start, depth = set(), a, 0
        segs = []
        for i in range(a, b):
            c = self.code[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "<":
                depth += 1
            elif c == ">" and self.code[i - 1] != "=":
                depth -= 1
            elif c == "," and depth == 0:
                segs.append((seg_start, i))
                seg_start = i + 1
        segs.append((seg_start, b))
        for s, e in segs:
            seg = self.code[s:e]
            m = re.match(r"\s*(?:@[\w$.]+(?:\([^)]*\))?\s*)*(?:(?:public|private|protected|readonly|override)\s+)*"
                         r"(?:\.\.\.)?\s*", seg)
            k = s + m.end()
            rest = self.code[k:e]
            m2 = re.match(IDENT, rest)
            if m2:
                out.add(m2.group(0))
            elif rest[:1] in "{[" and k in self.match:
                out |= self._pattern_names(k + 1, self.match[k])
        return out

    # --------------------------------------------------------------------------------- scanning
    def _scan(self):
        code = self.code
        # parameter lists: ( ... ) followed by `=>`, or by `{` (optionally after a return type) when not a
        # control statement
        for o, c in list(self.match.items()):
            if code[o] != "(":
                continue
            after = code[c + 1:c + 400]
            before = re.search(r"([\w$]+)\s*$", code[max(0, o - 40):o])
            word = before.group(1) if before else ""
            arrow = re.match(r"\s*(?::\s*[^;{}=]*?)?\s*=>", after)
            block = re.match(r"\s*(?::\s*[^;{}=]*?)?\s*\{", after)
            if arrow or (block and word not in ("if", "for", "while", "switch", "with")):
                self.params.add(o)
                self.own |= self._param_names(o + 1, c)
                if block and not arrow and before and before.group(1) not in JS_KEYWORDS:
                    self.own.add(word)  # a method (also an object literal's `name(...) {`)
        for m in re.finditer(r"(?<![\w$.])(" + IDENT + r")\s*=>", code):
            self.own.add(m.group(1))
        # declarations anywhere (own names) and at the top level (the index)
        decl = re.compile(r"(?<![\w$.])(?:(export)\s+)?(?:(default)\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
                          r"(function\s*\*?|class|interface|type|enum|namespace|const\s+enum|const|let|var)"
                          r"(?![\w$])\s*(" + IDENT + r"|[{\[])")
        for m in decl.finditer(code):
            kw = re.sub(r"\s+", " ", m.group(3)).replace(" *", "*").strip()
            name = m.group(4)
            top = self.depth[m.start()] == 0 and self.pdepth[m.start()] == 0
            if kw in ("const", "let", "var"):
                for dname, pattern in self._declarators(m.start(4)):
                    self.own |= {dname} if not pattern else self._pattern_names(dname + 1, self.match[dname])
                    if top and not pattern and dname != name:
                        self.decls.setdefault(dname, "value")
            if name in "{[":
                continue
            after = code[m.end():m.end() + 200]
            if kw == "type" and not re.match(r"\s*[=<]", after):
                continue
            if kw in ("class", "interface") and name in ("extends", "implements"):
                name = None
            if name:
                self.own.add(name)
            # type parameters of the declaration
            if name and kw in ("function", "function*", "class", "interface", "type"):
                tp = re.match(r"\s*<", after)
                if tp:
                    a = m.end() + tp.end()
                    depth, j = 1, a
                    while j < len(code) and depth and j < a + 400:
                        if code[j] == "<":
                            depth += 1
                        elif code[j] == ">" and code[j - 1] != "=":
                            depth -= 1
                        j += 1
                    for seg in code[a:j - 1].split(","):
                        t = re.match(r"\s*(?:const\s+|in\s+|out\s+)*(" + IDENT + ")", seg)
                        if t:
                            self.own.add(t.group(1))
            if kw in ("class", "interface"):
                self._body(m.end(), kw, name)
            if top and name and not name.startswith("#"):
                if kw in ("const", "let", "var") and re.match(r"\s*(?::[^=;]*)?=\s*(?:await\s+import|require)\s*\(",
                                                              after):
                    continue
                kind = {"class": "class", "function": "function", "function*": "function", "interface": "type",
                        "type": "type", "enum": "value", "const enum": "value", "namespace": "value"}.get(kw, "value")
                self.decls.setdefault(name, kind)
        # signatures without a body: methods of an interface / class body, declared functions
        for o, c in self.match.items():
            if code[o] != "(" or o in self.params:
                continue
            head = code[max(0, o - 200):o]
            member = re.search(r"(?<![\w$.])" + IDENT + r"\s*\??\s*(?:<[^()]*>)?\s*$", head) and \
                self.opener[o] in self.bodies
            if member or re.search(r"(?<![\w$.])function\s*\*?\s*(?:" + IDENT + r")?\s*(?:<[^()]*>)?\s*$", head):
                self.params.add(o)
                self.own |= self._param_names(o + 1, c)
        for m in re.finditer(r"(?<![\w$.])catch\s*\(\s*(" + IDENT + ")", code):
            self.own.add(m.group(1))
        # members of type literals: optional ones anywhere (`name?:` is a type's), the members of a parameter's
        # `{ ... }` (a type literal or a destructuring pattern) and of `type X = { ... }`
        for m in re.finditer(r"(?<![\w$.])(" + IDENT + r")\s*\?\s*:", code):
            self.own.add(m.group(1))
        for o, c in self.match.items():
            if code[o] == "{" and self.opener[o] in self.params:
                for m in re.finditer(r"(?<![\w$.])(" + IDENT + r")\s*[?]?\s*:", code[o + 1:c]):
                    if self.depth[o + 1 + m.start()] == self.depth[o] + 1:
                        self.own.add(m.group(1))
        for m in re.finditer(r"(?<![\w$.])type\s+" + IDENT + r"\s*(?:<[^=;]*>)?\s*=\s*\{", code):
            self._body(m.end() - 1, "type", None)
        # assignments: `NAME = ` at a statement start, `x.NAME = ` anywhere
        assign = r"\s*(?:\*\*|<<|>>>?|\?\?|&&|\|\||[-+*/%&|^])?=(?![=>])"
        for m in re.finditer(r"(?:^|[;{}])\s*(" + IDENT + ")" + assign, code, re.M):
            self.own.add(m.group(1))
        for m in re.finditer(r"\.\s*(" + IDENT + ")" + assign, code):
            self.own.add(m.group(1))

    def _declarators(self, start: int) -> list:
        """The declarators of a const/let/var list starting at code[start]: [(name, False)] or [(position of the
        pattern's bracket, True)]; the list ends at a `;`, or at a line end not after a comma, at its own depth."""
        code, out, j, n = self.code, [], start, len(self.code)
        seg = True
        while j < n:
            if seg:
                while j < n and code[j] in " \t\n":
                    j += 1
                m = re.compile(IDENT).match(code, j)
                if m:
                    out.append((m.group(0), False))
                elif j < n and code[j] in "{[" and j in self.match:
                    out.append((j, True))
                    j = self.match[j] + 1
                seg = False
                continue
            c = code[j]
            if c in "([{" and j in self.match:
                j = self.match[j] + 1
                continue
            if c == "<" and j > 0 and (code[j - 1].isalnum() or code[j - 1] in "_$"):  # generic type arguments
                k = j + 1
                depth = 1
                while k < n and depth and k < j + 300 and code[k] not in ";\n":
                    depth += {"<": 1, ">": -1}.get(code[k], 0) if not (code[k] == ">" and code[k - 1] == "=") else 0
                    k += 1
                if depth == 0:
                    j = k
                    continue
            if c in ";)]}":
                break
            if c == ",":
                seg = True
            elif c == "\n":
                k = j - 1
                while k > start and code[k] in " \t":
                    k -= 1
                if code[k] != ",":
                    nxt = re.compile(r"[ \t\n]*").match(code, j).end()
                    if nxt >= n or code[nxt] not in ".?:+-*/&|=,":
                        break
            j += 1
        return [(d, p) for d, p in out if p or d not in JS_KEYWORDS]

    MEMBER = re.compile(r"(?:@[\w$.]+(?:\([^)\n]*\))?\s+)*(?:(?:public|private|protected|static|readonly|abstract|"
                        r"override|declare|async|accessor|get|set)\s+)*\*?(#?" + IDENT + r")\s*[?!]?\s*(?:\(|<|:|="
                        r"(?![=>])|;|$)")

    def _body(self, start: int, kw: str, name: str | None):
        """Members of the class / interface body that opens after code[start]."""
        code = self.code
        j, pd = start, 0
        while j < len(code) and j < start + 2000:
            c = code[j]
            if c in "([":
                pd += 1
            elif c in ")]":
                pd -= 1
            elif c == "{" and pd == 0:
                break
            elif c == ";" and pd == 0:
                return
            j += 1
        if j >= len(code) or code[j] != "{" or j not in self.match:
            return
        o, e = j, self.match[j]
        self.bodies[o] = "interface" if kw == "type" else kw
        inner = self.depth[o] + 1
        first = self.line_of(o)
        last = self.line_of(e)
        for ln in range(first, last + 1):
            ls = self.line_starts[ln]
            le = self.line_starts[ln + 1] - 1 if ln + 1 < len(self.line_starts) else len(code)
            p = ls
            while p < le and code[p] in " \t":
                p += 1
            if ln == first:
                p = o + 1
                while p < le and code[p] in " \t":
                    p += 1
            if p >= le or p <= o or p >= e or self.depth[p] != inner or self.pdepth[p] != self.pdepth[o]:
                continue
            m = self.MEMBER.match(code, p, le)
            if not m:
                continue
            mem = m.group(1)
            if mem in JS_KEYWORDS and mem not in ("get", "set", "type"):
                continue
            self.own.add(mem.lstrip("#"))
            if kw == "class" and not mem.startswith("#"):
                self.decls.setdefault(mem, "member")
            if kw == "class" and mem == "constructor" and code[m.end() - 1] == "(":
                po = m.end() - 1
                if po in self.match:
                    seg = code[po + 1:self.match[po]]
                    for pm in re.finditer(r"(?:public|private|protected|readonly)\s+(?:readonly\s+)?(" + IDENT + ")",
                                          seg):
                        self.own.add(pm.group(1))
                        self.decls.setdefault(pm.group(1), "member")
        if kw == "class":
            for m in re.finditer(r"\bthis\.(" + IDENT + r")\s*=(?![=>])", code[o:e]):
                self.own.add(m.group(1))
                self.decls.setdefault(m.group(1), "member")

    def _import_lines(self) -> set:
        """Lines of import statements, export-from statements and `export { ... }` lists."""
        code, out = self.code, set()
        for m in re.finditer(r"(?:^|[;}])\s*(import|export)\b(?!\s*[.(])", code, re.M):
            s = m.start(1)
            kw = m.group(1)
            rest = code[m.end():m.end() + 20]
            if kw == "export" and not re.match(r"\s*(?:type\s+)?(?:\{|\*)", rest):
                continue
            if kw == "import" and re.match(r"\s*[\w$]+\s*=\s*(?!require)", rest):
                continue
            # statement end: the `from '...'` / bare module string / `;` / closing brace of an export list
            j = s
            end = None
            while j < len(code):
                c = code[j]
                if c in "'\"":
                    k = code.find(c, j + 1)
                    end = k if k >= 0 else j
                    break
                if c == ";":
                    end = j
                    break
                if c == "{" and j in self.match:
                    j = self.match[j]
                    after = code[j + 1:j + 200]
                    if not re.match(r"\s*from\b", after):
                        end = j
                        break
                j += 1
            if end is None:
                end = len(code) - 1
            for ln in range(self.line_of(s), self.line_of(end) + 1):
                out.add(ln)
        return out

    # --------------------------------------------------------------------------------- usage
    def usage(self, pos: int, name: str) -> str:
        code = self.code
        before = code[max(0, pos - 200):pos]
        if re.search(r"(?<![\w$.])new\s+(?:" + IDENT + r"\s*\.\s*)*$", before):
            return "constructor"
        if re.search(r"\.\s*$", before) and not re.search(r"\.\.\.\s*$", before):
            return "member"
        if re.match(r"\s*\(", code[pos + len(name):]):
            return "call"
        if self.ts and self.type_position(pos):
            return "type"
        return "other"

    def type_position(self, pos: int) -> bool:
        code = self.code
        before = code[max(0, pos - 200):pos]
        if re.search(r"(?<![\w$.])(?:extends|implements|as|satisfies)\s+$", before):
            return True
        if re.search(r"[\w$>\]]<$", before):
            return True
        if re.search(r"(?<![\w$.])type\s+" + IDENT + r"\s*(?:<[^=;]*>)?\s*=\s*$", before):
            return True  # the right side of a type alias
        m = re.search(r"(\)|" + IDENT + r")\s*[?!]?\s*:\s*$", before)
        if not m or before.endswith("::"):
            return False
        colon = pos - 1 - (len(before) - len(before.rstrip()))
        if m.group(1) == ")":
            close = pos - len(before) + m.start(1)
            if not hasattr(self, "_opens"):
                self._opens = {c: o for o, c in self.match.items()}
            return self._opens.get(close) in self.params
        o = self.opener[colon]
        if o >= 0 and code[o] == "(" and o in self.params:
            return True
        if o >= 0 and code[o] == "{" and o in self.bodies:
            return True
        return bool(re.search(r"(?<![\w$.])(?:const|let|var)\s+" + IDENT + r"\s*[?!]?\s*:\s*$", before))


# ------------------------------------------------------------------------------------------- Python

class PyFile:
    def __init__(self, rel: str, text: str):
        self.rel, self.text = rel, text
        self.ok = True
        self.decls, self.own, self.import_lines = {}, set(), set()
        self.classes = set()
        self.tokens = []
        self.imported = []  # (top-level module, names bound) of absolute imports
        self.ext = set()
        try:
            tree = ast.parse(text)
            self.tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (SyntaxError, ValueError, tokenize.TokenError):
            self.ok = False
            return
        self._index(tree.body)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.own.add(node.name)
            elif isinstance(node, ast.arg):
                self.own.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.own.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                self.own.add(node.attr)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.own.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.own.update(node.names)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                self.own.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for ln in range(node.lineno - 1, (node.end_lineno or node.lineno)):
                    self.import_lines.add(ln)
                if isinstance(node, ast.Import):
                    for a in node.names:
                        self.imported.append((a.name.split(".")[0], {a.asname or a.name.split(".")[0]}))
                elif node.level == 0 and node.module:
                    self.imported.append((node.module.split(".")[0],
                                          {x for a in node.names for x in (a.name, a.asname) if x}))
        self.tree = tree

    def _index(self, body, in_class=False):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.decls.setdefault(node.name, "member" if in_class else "function")
            elif isinstance(node, ast.ClassDef):
                if in_class:
                    continue
                self.decls[node.name] = "class"
                self.classes.add(node.name)
                self._index(node.body, in_class=True)
            elif in_class:
                continue
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            self.decls.setdefault(n.id, "value")
            elif isinstance(node, ast.If):
                self._index(node.body)
                self._index(node.orelse)
            elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                self._index(node.body)
                for h in node.handlers:
                    self._index(h.body)
                self._index(node.orelse)
                self._index(node.finalbody)
            elif isinstance(node, ast.With):
                self._index(node.body)


# ------------------------------------------------------------------------------------------- positions

def utf16_col(line: str, col: int) -> int:
    return len(line[:col].encode("utf-16-le")) // 2


def js_positions(f: JsFile, ok_name) -> list:
    """[(line, col, name, usage, at_indent)] of the qualifying occurrences of a TS/JS file."""
    out = []
    lines = f.text.split("\n")
    for ln, line in enumerate(lines):
        if len(line) > MAX_LINE or ln in f.import_lines:
            continue
        ls = f.line_starts[ln]
        cline = f.code[ls:ls + len(line)]
        indent = len(line) - len(line.lstrip())
        for m in re.finditer(r"(?<![\w$#@])" + IDENT, cline):
            name = m.group(0)
            if not ok_name(name):
                continue
            after = cline[m.end():]
            if re.match(r"\s*[?!]?\s*:(?!:)", after) and not re.search(r"(?:\?|\bcase)\s*$", cline[:m.start()]):
                continue  # an object-literal key, a label, an annotated declaration (not `a ? name : b`)
            pos = ls + m.start()
            if any(a <= pos < b for a, b in f.templates):
                continue  # inside a template literal (a substitution too)
            out.append((ln, m.start(), name, f.usage(pos, name), m.start() == indent))
    return out


def py_positions(f: PyFile, ok_name, classes: set) -> list:
    out = []
    lines = f.text.split("\n")
    toks = [t for t in f.tokens if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                                    tokenize.COMMENT)]
    depth = 0
    for k, t in enumerate(toks):
        if t.type == tokenize.OP:
            if t.string in "([{":
                depth += 1
            elif t.string in ")]}":
                depth = max(0, depth - 1)
            continue
        if t.type != tokenize.NAME or t.start[0] != t.end[0]:
            continue
        ln, col = t.start[0] - 1, t.start[1]
        name = t.string
        if ln in f.import_lines or len(lines[ln]) > MAX_LINE or not ok_name(name):
            continue
        prev = toks[k - 1] if k else None
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        if prev is not None and prev.type == tokenize.NAME and prev.string in ("def", "class"):
            continue
        if nxt is not None and nxt.type == tokenize.OP and nxt.string == "=" and depth > 0:
            continue  # a keyword argument
        if nxt is not None and nxt.string == "(" and name in classes:
            usage = "constructor"
        elif prev is not None and prev.type == tokenize.OP and prev.string == ".":
            usage = "member"
        elif nxt is not None and nxt.type == tokenize.OP and nxt.string == "(":
            usage = "call"
        else:
            usage = "other"
        indent = len(lines[ln]) - len(lines[ln].lstrip())
        out.append((ln, col, name, usage, col == indent))
    return out


def py_line_starts(f: PyFile) -> set:
    """Lines whose first token starts at the indentation (not inside a multi-line string)."""
    out = set()
    seen = set()
    for t in f.tokens:
        if t.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        ln = t.start[0] - 1
        if ln in seen:
            continue
        seen.add(ln)
        if t.type not in (tokenize.COMMENT,) and not (t.type == tokenize.STRING and t.end[0] != t.start[0]):
            out.add(ln)
    return out


def js_line_starts(f: JsFile) -> set:
    out = set()
    lines = f.text.split("\n")
    for ln, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if not line.strip():
            continue
        p = f.line_starts[ln] + indent
        if f.code[p] == line[indent] and not line.lstrip().startswith(("//", "/*", "*")) and \
                not any(a <= p < b for a, b in f.templates):
            out.add(ln)
    return out


# ------------------------------------------------------------------------------------------- imports

def js_imports(rel: str, text: str, have: set) -> set:
    """The files of `have` that rel's relative imports (import/export-from, import(), require()) resolve to: the
    TypeScript file of a `./x.js` specifier first, then the file itself, `x.ts`..., `x/index.ts`..., and last a
    declaration file (which the set never holds, so that such an import makes rel ineligible)."""
    out = set()
    base = posixpath.dirname(rel)
    for m in re.finditer(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"](\.[^'"]*)['"]""", text):
        spec = posixpath.normpath(posixpath.join(base, m.group(1)))
        stem = re.sub(r"\.(?:m|c)?jsx?$", "", spec)
        cands = [stem + e for e in (".ts", ".tsx", ".mts", ".cts")] + [spec] + \
            [spec + e for e in (".ts", ".tsx", ".mts", ".js", ".mjs", ".jsx", ".cjs")] + \
            [spec + "/index" + e for e in (".ts", ".tsx", ".mts", ".js", ".mjs", ".jsx", ".cjs")] + \
            [stem + ".d.ts", stem + ".d.mts", spec + ".d.ts", spec + "/index.d.ts"]
        for cand in cands:
            if cand in have:
                out.add(cand)
                break
    return out


def py_imports(rel: str, f: PyFile, have: set) -> set:
    out = set()
    if not f.ok:
        return out
    pkg = posixpath.dirname(rel)

    def add_module(path: str):
        for cand in (path + ".py", path + "/__init__.py"):
            if cand in have:
                out.add(cand)
                return True
        return False

    for node in ast.walk(f.tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add_module(a.name.replace(".", "/"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg
                for _ in range(node.level - 1):
                    base = posixpath.dirname(base)
                mod = posixpath.join(base, node.module.replace(".", "/")) if node.module else base
            else:
                mod = (node.module or "").replace(".", "/")
            if mod:
                add_module(mod)
            for a in node.names:
                if a.name != "*":
                    add_module(posixpath.join(mod, a.name) if mod else a.name)
    return out


def init_chain(rel: str, have: set) -> set:
    out, d = set(), posixpath.dirname(rel)
    while d:
        if d + "/__init__.py" in have:
            out.add(d + "/__init__.py")
        d = posixpath.dirname(d)
    return out


# ------------------------------------------------------------------------------------------- packages

GENERATED_NAME = re.compile(r"(?:_pb2?|\.pb|\.generated|_generated)\.(?:[cm]?[jt]sx?|py)$")
GENERATED_DIRS = {"generated", "__generated__"}
TEST_MODULES = {"test.py", "tests.py"}


def read_source(path: str) -> str | None:
    """corpus.read_text without its 200-byte minimum (a project's tiny modules are part of its tree)."""
    try:
        with open(path, "rb") as f:
            b = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if len(b) > MAX_FILE_BYTES or not b.strip() or b"\x00" in b:
        return None
    try:
        return b.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


def reject_reason(path: str, rel: str) -> tuple:
    """(text, None) or (None, why) for one candidate file."""
    parts = rel.split("/")
    if GENERATED_NAME.search(parts[-1]) or any(p in GENERATED_DIRS for p in parts[:-1]):
        return None, "generated-name"
    if parts[-1] in TEST_MODULES:
        return None, "test-module"
    text = read_source(path)
    if text is None:
        return None, "size/binary/encoding"
    why = looks_generated_or_minified(text, rel)
    if why and len(text) < 200 and why in ("low-whitespace", "data-like", "numeric-data", "avg-line"):
        why = None  # ratios mean nothing on a few lines
    return (None, why) if why else (text, None)


def raw_paths(root: str, exts) -> set:
    """Every file of a tree with one of exts (tests, vendored copies and declaration files too): what imports
    resolve against before the filters, so that a file importing a left-out one is never sampled."""
    out = set()
    for dp, dns, fns in os.walk(root):
        dns[:] = sorted(d for d in dns if d != "node_modules")
        for fn in fns:
            if fn.endswith(tuple(exts)):
                out.add(os.path.relpath(os.path.join(dp, fn), root).replace(os.sep, "/"))
    return out


def debian_files(folder: str, name: str, override: str | None, rejected: Counter):
    """make_external_eval.debian_package with this script's reader: (version, licence, [(rel, text)], note,
    raw paths)."""
    version, lic, files, note = debian_package(folder, name, override, rejected, reader=reject_reason)
    root = os.path.join(folder, DIST)
    return version, lic, files, note, raw_paths(root, (".py",)) if os.path.isdir(root) else set()


def npm_files(root: str, rejected: Counter) -> tuple:
    """(language, [(rel, text)], raw paths) of one npm package (see the docstring)."""
    rels = [r for r in list_files(root, JS_EXT) if r.endswith(SOURCE_SUFFIXES)]
    ts = [r for r in rels if r.endswith(TS_SUFFIXES)]
    lang = "typescript" if len(ts) >= 3 else "javascript"
    if lang == "typescript":
        rejected["js-beside-ts"] += len(rels) - len(ts)
        rels = ts
    else:
        rels = [r for r in rels if not r.endswith(TS_SUFFIXES)]
    files = sources_first(root, rels, rejected, reader=reject_reason)
    best = {}
    for rel, text in files:
        k = file_key(rel) if in_build_dir(rel) else rel  # build copies of one module share a key
        esm = bool(re.search(r"^\s*(?:import|export)\b", text, re.M))
        cjs_dir = any(p in CJS_DIRS for p in rel.split("/")[:-1])
        rank = (0 if esm else 1, 1 if cjs_dir else 0, EXT_RANK.get(os.path.splitext(rel)[1], 9), len(rel), rel)
        if k in best:
            rejected["build-copy"] += 1
            if rank >= best[k][0]:
                continue
        best[k] = (rank, rel, text)
    raw = raw_paths(root, tuple(JS_EXT) + (".d.ts", ".d.mts", ".d.cts"))
    return lang, sorted(((rel, text) for _, rel, text in best.values()), key=lambda f: f[0]), raw


def read_list(path: str) -> dict:
    """make_external_eval.read_list's format plus an [npm-types] section: packages installed beside the [npm] ones
    only for their .d.ts names (peer dependencies that npm --legacy-peer-deps leaves out), never used as code."""
    return external_read_list(path, ("npm", "npm-types", "debian"))


def prepare(lists: dict, npm_dir: str, deb_dir: str):
    """make_external_eval.prepare, again when run twice: the [npm] and [npm-types] lists installed in npm_dir,
    the [debian] list downloaded and unpacked (afresh) in deb_dir/<package>."""
    os.makedirs(npm_dir, exist_ok=True)
    pj = os.path.join(npm_dir, "package.json")
    if not os.path.exists(pj):
        with open(pj, "w") as f:
            f.write('{"name":"crossfile","version":"1.0.0","private":true}\n')
    subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--legacy-peer-deps"] +
                   [spec for spec, _, _ in lists["npm"] + lists["npm-types"]], cwd=npm_dir, check=True)
    debs = os.path.join(deb_dir, "debs")
    os.makedirs(debs, exist_ok=True)
    subprocess.run(["apt-get", "download"] + [n for _, n, _ in lists["debian"]], cwd=debs, check=True)
    for _, name, _ in lists["debian"]:
        got = sorted(fn for fn in os.listdir(debs) if fn.startswith(name + "_") and fn.endswith(".deb"))
        if not got:
            raise SystemExit(f"{name}: no .deb downloaded")
        folder = os.path.join(deb_dir, name)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        subprocess.run(["dpkg-deb", "-R", os.path.join(debs, got[-1]), folder], check=True)


def list_names(path: str) -> set:
    out = set()
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("["):
            continue
        for tok in line.split():
            if "=" in tok:
                continue
            out.add((tok.rsplit("@", 1)[0] if tok.rfind("@") > 0 else tok).lower())
    return out


def corpus_npm_list_names() -> set:
    out = set()
    for raw in open(CORPUS_NPM_LIST, encoding="utf-8"):
        if raw.lstrip().startswith("#"):
            continue
        for tok in raw.split():
            out.add((tok.rsplit("@", 1)[0] if tok.rfind("@") > 0 else tok).lower())
    return out


# ------------------------------------------------------------------------------------------- sampling

def allocate(quota: int, caps: dict) -> dict:
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


def kinds_for(n: int, offset: int, share: float) -> list:
    return ["line-start" if int((offset + k + 1) * share) > int((offset + k) * share) else "at-name"
            for k in range(n)]


class Package:
    def __init__(self, name, version, source, licence, language, files, raw, note=None):
        self.name, self.version, self.source, self.licence = name, version, source, licence
        self.raw = raw
        self.ineligible = {}
        self.language, self.files, self.note = language, dict(files), note
        self.parsed = {}
        self.index = defaultdict(list)  # name -> [rel]
        self.kinds = defaultdict(set)
        self.positions = {}  # rel -> {"at-name": [...], "line-start": [...]}
        self.blocked = set()
        self.unparsed = []
        self.lines = {r: t.split("\n") for r, t in self.files.items()}
        self.sizes = {r: len(t.encode("utf-8")) for r, t in self.files.items()}
        self._required, self._imports = {}, {}

    def build(self, blocked: set, a):
        self.blocked = blocked
        for rel, text in sorted(self.files.items()):
            f = PyFile(rel, text) if rel.endswith(".py") else JsFile(rel, text)
            if isinstance(f, PyFile) and not f.ok:
                self.unparsed.append(rel)
            self.parsed[rel] = f
        tops = {r.split("/")[0].removesuffix(".py") for r in self.files}
        for f in self.parsed.values():
            if isinstance(f, PyFile):
                f.ext = {n for mod, names in f.imported if mod not in tops for n in names}
        for rel, f in sorted(self.parsed.items()):
            for n, k in f.decls.items():
                self.index[n].append(rel)
                self.kinds[n].add(k)
        for rel, f in sorted(self.parsed.items()):
            if rel.endswith(JSX_SUFFIXES) or (isinstance(f, PyFile) and not f.ok):
                continue
            imports = py_imports(rel, f, self.raw) if isinstance(f, PyFile) else js_imports(rel, f.text, self.raw)
            left_out = sorted(r for r in imports if r not in self.files)
            if left_out:
                self.ineligible[rel] = left_out
                continue

            def ok_name(n, f=f, rel=rel):
                return (len(n) >= a.min_name and not n.startswith("__") and n not in blocked and n in self.index
                        and n not in f.own and n not in f.ext and rel not in self.index[n]
                        and len(self.index[n]) <= a.max_definers)

            if isinstance(f, PyFile):
                classes = {n for n, ks in self.kinds.items() if "class" in ks}
                occ = py_positions(f, ok_name, classes)
                starts = py_line_starts(f)
            else:
                occ = js_positions(f, ok_name)
                starts = js_line_starts(f)
            at = [(ln, col, name, usage) for ln, col, name, usage, _ in occ]
            first = {}
            for ln, col, name, usage, _ in occ:
                if ln in starts and ln > 0 and ln not in first:
                    first[ln] = (ln, None, name, usage)
            ls = [first[ln] for ln in sorted(first)]
            if at or ls:
                self.positions[rel] = {"at-name": at, "line-start": ls}

    def sample(self, n: int, kinds: list, a, required_of) -> list:
        rng = random.Random(f"{a.seed}:{self.name}")
        files = sorted(self.positions)
        rng.shuffle(files)
        per_file, per_name, used = Counter(), Counter(), set()
        required = set()
        out = []
        budget = 0.8 * a.package_cap
        ptr = 0
        exhausted = set()
        for kind in kinds:
            got = False
            if kind in exhausted:
                continue
            for step in range(len(files)):
                rel = files[(ptr + step) % len(files)]
                if per_file[rel] >= a.per_file:
                    continue
                pool = [p for p in self.positions[rel][kind] if per_name[p[2]] < a.per_name]
                rng.shuffle(pool)
                for ln, col, name, usage in pool:
                    line = self.lines[rel][ln]
                    c = col if kind == "at-name" else len(line) - len(line.lstrip())
                    if (rel, ln, c) in used:
                        continue
                    need = required | required_of(rel, name)
                    if sum(self.sizes[r] for r in need) > budget:
                        continue
                    required = need
                    used.add((rel, ln, c))
                    per_file[rel] += 1
                    per_name[name] += 1
                    expected = line[c:]
                    out.append({"package": self.name, "path": rel, "language": language_of(rel),
                                "line": ln, "character": utf16_col(line, c), "expected": expected, "kind": kind,
                                "name": name, "usage": usage, "definedIn": sorted(self.index[name])})
                    got = True
                    break
                if got:
                    ptr = (ptr + step + 1) % len(files)
                    break
            if not got:
                exhausted.add(kind)
        return out

    def required_of(self, rel: str, name: str) -> set:
        """The files a sample at rel using name needs: rel, the files declaring name, the files rel imports, and
        (Python) the __init__.py of their folders."""
        key = (rel, name)
        if key not in self._required:
            have = set(self.files)
            if rel not in self._imports:
                f = self.parsed[rel]
                self._imports[rel] = py_imports(rel, f, have) if isinstance(f, PyFile) else \
                    js_imports(rel, self.files[rel], have)
            need = {rel} | set(self.index[name]) | self._imports[rel]
            for r in list(need):
                need |= init_chain(r, have)
            self._required[key] = frozenset(need)
        return self._required[key]


def language_of(rel: str) -> str:
    if rel.endswith(".py"):
        return "python"
    return "typescript" if rel.endswith(TS_SUFFIXES) else "javascript"


def folder_distance(a: str, b: str) -> int:
    da, db = a.split("/")[:-1], b.split("/")[:-1]
    k = 0
    while k < min(len(da), len(db)) and da[k] == db[k]:
        k += 1
    return len(da) + len(db) - 2 * k


# ------------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", default=LIST)
    ap.add_argument("--npm", default="/tmp/crossfile-npm", help="npm scratch folder (node_modules inside)")
    ap.add_argument("--debian", default="/tmp/crossfile-deb", help="folder of unpacked .debs, one per package")
    ap.add_argument("--prepare", action="store_true", help="install the lists into --npm and --debian first")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--manifest", default=MANIFEST)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--line-start-share", type=float, default=0.3)
    ap.add_argument("--per-file", type=int, default=3)
    ap.add_argument("--per-name", type=int, default=2)
    ap.add_argument("--min-name", type=int, default=4)
    ap.add_argument("--max-definers", type=int, default=3)
    ap.add_argument("--package-cap", type=int, default=400_000, help="bytes of source per package at most")
    ap.add_argument("--total-cap", type=int, default=4_000_000, help="bytes of source in all, about")
    a = ap.parse_args()

    lists = read_list(a.list)
    if a.prepare:
        prepare(lists, a.npm, a.debian)
    corpus = corpus_names()
    other_lists = set()
    for p in OTHER_LISTS:
        other_lists |= list_names(p)
    corpus_npm = corpus_npm_list_names()
    rejected = Counter()
    excluded, packages = [], []

    def exclude(name, source, reason, **kw):
        excluded.append({"name": name, "source": source, **kw, "reason": reason})

    def listed_elsewhere(name):
        n = name.lower()
        if n in corpus:
            return "in the training corpus (licences.json)"
        if n in other_lists:
            return "in external-eval-packages.txt or frozen-eval-packages.txt"
        if n in corpus_npm:
            return "in corpus-npm-packages.txt"
        return None

    installed = {}
    for s in npm_sources(a.npm) if os.path.isdir(os.path.join(a.npm, "node_modules")) else []:
        installed.setdefault(s["package"], []).append(s)
    listed = {name for _, name, _ in lists["npm"]}
    deps_in_corpus = sorted(n for n in installed if n not in listed and n.lower() in corpus)
    dep_names = {}
    for spec, name, kv in lists["npm"]:
        why = listed_elsewhere(name)
        if why:
            exclude(name, "npm", why)
            continue
        if name not in installed:
            exclude(name, "npm", f"not installed in {a.npm}")
            continue
        src = sorted(installed[name], key=lambda s: len(s["root"]))[0]
        want = spec.rsplit("@", 1)[1] if spec.rfind("@") > 0 else None
        if want and src["version"] != want:
            print(f"warning: {name}: installed {src['version']}, the list pins {want}")
        lic = str(src["licence"])
        if not licence_ok(lic):
            exclude(name, "npm", "licence not in the permissive allow-list", version=src["version"], licence=lic)
            continue
        lang, files, raw = npm_files(src["root"], rejected)
        packages.append(Package(name, src["version"], "npm", lic, lang, files, raw))
        dep_names[name] = npm_dependency_names(a.npm, src["root"])

    for _, name, kv in lists["debian"]:
        why = listed_elsewhere(name)
        if why:
            exclude(name, "debian", why)
            continue
        folder = os.path.join(a.debian, name)
        if not os.path.isdir(folder):
            exclude(name, "debian", f"not unpacked in {a.debian}")
            continue
        version, lic, files, note, raw = debian_files(folder, name, kv.get("licence"), rejected)
        if kv.get("version") and version != kv["version"]:
            print(f"warning: {name}: unpacked {version}, the list says {kv['version']}")
        if not lic or not licence_ok(lic):
            exclude(name, "debian", f"licence not in the permissive allow-list ({note})", version=version,
                    licence=lic)
            continue
        packages.append(Package(name, version, "debian", lic, "python", files, raw, note))

    # corpus near-duplicates (Debian's stdlib and installed corpus python3-* packages) and exact duplicates
    ref = Reference()
    python_reference(ref, corpus)
    seen = {}
    for pkg in sorted(packages, key=lambda p: (p.source, p.name)):
        pkg.dropped = Counter()
        for rel, text in sorted(pkg.files.items()):
            h = hashlib.sha1(text.encode("utf-8")).digest()
            why = "duplicate" if seen.get(h, pkg.name) != pkg.name else \
                ref.near_dup(text) if len(text.encode("utf-8")) >= 200 else None  # the corpus has none so small
            if why:
                rejected[why] += 1
                pkg.dropped[why] += 1
                del pkg.files[rel]
                continue
            seen[h] = pkg.name
    for pkg in list(packages):
        if len(pkg.files) < 3:
            exclude(pkg.name, pkg.source, "fewer than 3 usable source files", version=pkg.version,
                    licence=pkg.licence)
            packages.remove(pkg)
    packages.sort(key=lambda p: (p.source, p.name))

    # names left out
    js_names, js_info = js_std_names()
    py_names = python_std_names()
    for pkg in packages:
        blocked = py_names if pkg.language == "python" else js_names | dep_names[pkg.name][0]
        pkg.build(blocked, a)

    # sampling: half TS/JS (npm), half Python (Debian)
    samples = []
    halves = {"npm": a.n // 2, "debian": a.n - a.n // 2}
    for source in ("npm", "debian"):
        pk = [p for p in packages if p.source == source]
        caps = {}
        for p in pk:  # what a package can give at most: a dry run
            trial = p.sample(a.n, ["at-name"] * a.n, a, p.required_of)
            trial2 = p.sample(a.n, ["line-start"] * a.n, a, p.required_of)
            caps[p.name] = min(len(trial) + len(trial2), a.per_file * len(p.positions))
        share = allocate(halves[source], caps)
        offset = 0
        got = {}
        for p in pk:
            n = share[p.name]
            s = p.sample(n, kinds_for(n, offset, a.line_start_share), a, p.required_of) if n else []
            got[p.name] = s
            offset += n
        short = halves[source] - sum(len(s) for s in got.values())
        if short > 0:  # a package's dry run over-counted: others of the half give one more each, in turn
            for p in pk:
                if short <= 0:
                    break
                n = len(got[p.name]) + 1
                s = p.sample(n, kinds_for(n, 0, a.line_start_share), a, p.required_of)
                if len(s) == n:
                    got[p.name] = s
                    short -= 1
        for p in pk:
            samples += got[p.name]
        if sum(len(s) for s in got.values()) < halves[source]:
            print(f"warning: {source}: {sum(len(s) for s in got.values())} samples of {halves[source]}")

    # files: required first, then the nearest others while they fit
    by_pkg = defaultdict(list)
    for s in samples:
        by_pkg[s["package"]].append(s)
    plans = {}
    for p in packages:
        sampled = sorted({s["path"] for s in by_pkg[p.name]})
        req = set()
        for s in by_pkg[p.name]:
            req |= p.required_of(s["path"], s["name"])
        order = sorted((r for r in p.files if r not in req),
                       key=lambda r: (min((folder_distance(r, x) for x in sampled), default=99), r))
        sizes = {r: len(t.encode("utf-8")) for r, t in p.files.items()}
        plans[p.name] = (req, order, sizes)

    def take(limit_per_pkg: int) -> dict:
        out = {}
        for p in packages:
            req, order, sizes = plans[p.name]
            keep = set(req)
            total = sum(sizes[r] for r in keep)
            cap = min(a.package_cap, max(limit_per_pkg, total))
            for r in order:
                extra = {r} | init_chain(r, set(p.files)) - keep
                add = sum(sizes[x] for x in extra)
                if total + add <= cap:
                    keep |= extra
                    total += add
            out[p.name] = keep
        return out

    lo, hi = 0, a.package_cap
    kept = take(hi)
    if sum(sum(plans[p][2][r] for r in ks) for p, ks in kept.items()) > a.total_cap:
        while lo < hi:
            mid = (lo + hi + 1) // 2
            k = take(mid)
            if sum(sum(plans[p][2][r] for r in ks) for p, ks in k.items()) <= a.total_cap:
                lo = mid
            else:
                hi = mid - 1
        kept = take(lo)
    for s in samples:
        assert s["path"] in kept[s["package"]] and all(d in kept[s["package"]] for d in s["definedIn"])

    files_out = {}
    pkg_entries = []
    for p in packages:
        for r in sorted(kept[p.name]):
            files_out[f"{p.name}/{r}"] = p.files[r]
        pkg_entries.append({"name": p.name, "version": p.version, "licence": p.licence, "language": p.language,
                            "files": len(kept[p.name])})
    out = {"version": 1, "seed": a.seed, "packages": pkg_entries, "files": files_out, "samples": samples}
    data = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "wb") as f:
        f.write(gzip.compress(data, compresslevel=9, mtime=0))

    # manifest
    entries = []
    for p in packages:
        ss = by_pkg[p.name]
        e = {"name": p.name, "version": p.version, "source": p.source, "licence": p.licence,
             "language": p.language, "samples": len(ss), "files": len(kept[p.name]),
             "bytes": sum(plans[p.name][2][r] for r in kept[p.name]),
             "files_usable": len(p.files), "bytes_usable": sum(plans[p.name][2].values()),
             "files_sampled": len({s["path"] for s in ss}), "files_with_positions": len(p.positions),
             "declared_names": len(p.index),
             "by_kind": dict(sorted(Counter(s["kind"] for s in ss).items())),
             "by_usage": dict(sorted(Counter(s["usage"] for s in ss).items()))}
        if p.note:
            e["licence_note"] = p.note
        if p.dropped:
            e["files_dropped"] = dict(sorted(p.dropped.items()))
        if p.unparsed:
            e["files_unparsed"] = p.unparsed
        if p.ineligible:
            e["files_not_sampled_importing_left_out_files"] = len(p.ineligible)
        if p.source == "npm":
            e["dependency_types"] = dep_names[p.name][1]
        entries.append(e)
    total_bytes = sum(e["bytes"] for e in entries)
    source_of = {p.name: p.source for p in packages}
    manifest = {
        "summary": {
            "samples": len(samples), "files": len(files_out), "bytes": total_bytes,
            "bytes_gzip": os.path.getsize(a.out), "bytes_json": len(data),
            "by_language": dict(sorted(Counter(s["language"] for s in samples).items())),
            "by_kind": dict(sorted(Counter(s["kind"] for s in samples).items())),
            "by_usage": dict(sorted(Counter(s["usage"] for s in samples).items())),
            "by_source": dict(sorted(Counter(source_of[s["package"]] for s in samples).items())),
        },
        "parameters": {"seed": a.seed, "n": a.n, "line_start_share": a.line_start_share, "per_file": a.per_file,
                       "per_name": a.per_name, "min_name": a.min_name, "max_definers": a.max_definers,
                       "max_line": MAX_LINE, "package_cap": a.package_cap, "total_cap": a.total_cap,
                       "halves": halves},
        "names_left_out": {"javascript": {"count": len(js_names), "from": js_info},
                           "python": {"count": len(py_names), "python": sys.version.split()[0],
                                      "modules": STD_PY_MODULES}},
        "corpus_check": {"names": os.path.relpath(LICENCES, REPO),
                         "lists": [os.path.relpath(p, REPO) for p in OTHER_LISTS + [CORPUS_NPM_LIST]],
                         "near_duplicate_reference": ref.sources, "reference_files": ref.nfiles},
        "files_rejected": dict(sorted(rejected.items())),
        "packages": entries,
        "excluded": sorted(excluded, key=lambda e: (e["source"], e["name"])),
        "npm_dependencies": {"in_corpus_never_used": deps_in_corpus},
    }
    with open(a.manifest, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")

    sm = manifest["summary"]
    print(f"{len(samples)} samples, {len(files_out)} files, {total_bytes / 1e3:.0f} KB of source -> {a.out} "
          f"({sm['bytes_gzip'] / 1e3:.0f} KB gzip); manifest {a.manifest}")
    for e in entries:
        print(f"  {e['name']}@{e['version']} {e['licence']} {e['language']}: {e['files']} files "
              f"({e['bytes'] / 1e3:.0f} KB of {e['bytes_usable'] / 1e3:.0f}), {e['samples']} samples "
              f"{e['by_usage']}")
    print(json.dumps({k: sm[k] for k in ("by_language", "by_kind", "by_usage")}))
    for e in manifest["excluded"]:
        print(f"excluded {e['source']} {e['name']}: {e['reason']}")


if __name__ == "__main__":
    main()
