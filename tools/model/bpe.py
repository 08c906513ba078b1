"""Byte-level BPE (GPT-2 style) trainer and encoder that writes a Hugging Face tokenizer.json.

The encoder here must give exactly the ids that `@huggingface/tokenizers` (JS) gives for the written
tokenizer.json; `check_against_js` (through encode_js.cjs) checks that on sample text.

Pre-tokenization: a code-friendly split regex (GPT-2 / cl100k family, without English contractions):
  - identifiers: optional leading space + letters/underscore   ` ?[\\p{L}_]+`
  - numbers: optional space + up to 3 digits                    ` ?\\p{N}{1,3}`
  - punctuation runs (with trailing newlines)                   ` ?[^\\s\\p{L}\\p{N}_]+[\\r\\n]*`
  - newlines (with whitespace before them)                      `\\s*[\\r\\n]+`
  - runs of spaces not followed by non-space (indentation)      `\\s+(?!\\S)`
  - any other whitespace                                        `\\s+`
then each piece goes to bytes, mapped with the GPT-2 byte-to-unicode table, then BPE merges.
"""
from __future__ import annotations

import heapq
import json
import os
import subprocess
import tempfile
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Sequence, Tuple

import regex

SPLIT_PATTERN = r" ?[\p{L}_]+| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}_]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

SPECIAL_TOKENS = ["<|endoftext|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<file_sep>"]
EOS = "<|endoftext|>"
FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX, FILE_SEP = "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<file_sep>"


def _python_pattern(p: str) -> str:
    # The JS library rewrites \s to \p{White_Space} (and \S to \P{White_Space}); do the same here so
    # both sides agree on what whitespace is.
    return p.replace(r"\s", r"\p{White_Space}").replace(r"\S", r"\P{White_Space}")


_SPLIT_RE = regex.compile(_python_pattern(SPLIT_PATTERN))


def bytes_to_unicode() -> Dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(
        range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_ENCODER = bytes_to_unicode()
BYTE_DECODER = {v: k for k, v in BYTE_ENCODER.items()}


def pre_tokenize(text: str) -> List[str]:
    """Split + ByteLevel: returns byte-level-mapped pieces."""
    out = []
    for m in _SPLIT_RE.finditer(text):
        s = m.group(0)
        if s:
            out.append("".join(BYTE_ENCODER[b] for b in s.encode("utf-8")))
    return out


def train_bpe(texts: Iterable[str], vocab_size: int, special_tokens: Sequence[str] = SPECIAL_TOKENS,
              min_frequency: int = 2, verbose: bool = False) -> Tuple[Dict[str, int], List[Tuple[str, str]]]:
    """Train byte-level BPE. Ids: special tokens first, then the 256 byte symbols, then merges."""
    word_counts: Counter = Counter()
    for t in texts:
        word_counts.update(pre_tokenize(t))
    vocab: Dict[str, int] = {}
    for s in special_tokens:
        vocab[s] = len(vocab)
    for b in range(256):
        vocab[BYTE_ENCODER[b]] = len(vocab)
    n_merges = vocab_size - len(vocab)
    words = [list(w) for w in word_counts]
    counts = [word_counts[w] for w in word_counts]
    pair_counts: Dict[Tuple[str, str], int] = defaultdict(int)
    where: Dict[Tuple[str, str], set] = defaultdict(set)
    for i, w in enumerate(words):
        c = counts[i]
        for a, b in zip(w, w[1:]):
            pair_counts[(a, b)] += c
            where[(a, b)].add(i)
    heap = [(-c, p) for p, c in pair_counts.items()]
    heapq.heapify(heap)
    merges: List[Tuple[str, str]] = []
    while len(merges) < n_merges and heap:
        negc, pair = heapq.heappop(heap)
        cur = pair_counts.get(pair, 0)
        if cur != -negc:
            if cur > 0:
                heapq.heappush(heap, (-cur, pair))
            continue
        if cur < min_frequency:
            break
        a, b = pair
        new = a + b
        merges.append(pair)
        vocab[new] = len(vocab)
        changed: Dict[Tuple[str, str], int] = defaultdict(int)
        for i in list(where[pair]):
            w = words[i]
            c = counts[i]
            # remove old pair counts of this word
            for p in zip(w, w[1:]):
                changed[p] -= c
            j = 0
            nw = []
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    nw.append(new)
                    j += 2
                else:
                    nw.append(w[j])
                    j += 1
            words[i] = nw
            for p in zip(nw, nw[1:]):
                changed[p] += c
                where[p].add(i)
        for p, d in changed.items():
            if d == 0:
                continue
            pair_counts[p] += d
            if pair_counts[p] <= 0:
                pair_counts.pop(p, None)
            else:
                heapq.heappush(heap, (-pair_counts[p], p))
        pair_counts.pop(pair, None)
        where.pop(pair, None)
        if verbose and len(merges) % 500 == 0:
            print(f"  {len(merges)} merges, last {new!r} count {cur}", flush=True)
    return vocab, merges


class Encoder:
    """Encoder equivalent to @huggingface/tokenizers for the tokenizer.json written by `to_tokenizer_json`."""

    def __init__(self, vocab: Dict[str, int], merges: Sequence[Tuple[str, str]],
                 special_tokens: Sequence[str] = SPECIAL_TOKENS):
        self.vocab = dict(vocab)
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.merges = [tuple(m) for m in merges]
        self.special_tokens = list(special_tokens)
        self.cache: Dict[str, List[int]] = {}
        if self.special_tokens:
            self._special_re = regex.compile("|".join(regex.escape(s) for s in
                                                      sorted(self.special_tokens, key=len, reverse=True)))
        else:
            self._special_re = None

    @classmethod
    def from_tokenizer_json(cls, path: str) -> "Encoder":
        with open(path, encoding="utf-8") as f:
            tj = json.load(f)
        m = tj["model"]
        merges = [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]]
        specials = [t["content"] for t in tj["added_tokens"]]
        return cls(m["vocab"], merges, specials)

    def _bpe(self, piece: str) -> List[int]:
        hit = self.cache.get(piece)
        if hit is not None:
            return hit
        word = list(piece)
        ranks = self.ranks
        while len(word) > 1:
            best = None
            best_rank = None
            for i in range(len(word) - 1):
                r = ranks.get((word[i], word[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best_rank, best = r, i
            if best is None:
                break
            a, b = word[best], word[best + 1]
            nw = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
                    nw.append(a + b)
                    i += 2
                else:
                    nw.append(word[i])
                    i += 1
            word = nw
        ids = [self.vocab[t] for t in word]
        if len(piece) < 256:
            if len(self.cache) > 500_000:
                self.cache.clear()
            self.cache[piece] = ids
        return ids

    def encode_ordinary(self, text: str) -> List[int]:
        """Encode text, treating special-token strings as plain text."""
        out: List[int] = []
        for p in pre_tokenize(text):
            out.extend(self._bpe(p))
        return out

    def encode(self, text: str) -> List[int]:
        """Encode like the JS Tokenizer.encode (special token strings become their ids)."""
        if self._special_re is None:
            return self.encode_ordinary(text)
        out: List[int] = []
        pos = 0
        for m in self._special_re.finditer(text):
            if m.start() > pos:
                out.extend(self.encode_ordinary(text[pos:m.start()]))
            out.append(self.vocab[m.group(0)])
            pos = m.end()
        if pos < len(text):
            out.extend(self.encode_ordinary(text[pos:]))
        return out

    def decode(self, ids: Sequence[int]) -> str:
        parts = []
        buf = bytearray()
        for i in ids:
            t = self.id_to_token[int(i)]
            if t in self.special_tokens:
                parts.append(buf.decode("utf-8", errors="replace"))
                buf = bytearray()
                parts.append(t)
            else:
                buf.extend(BYTE_DECODER[c] for c in t)
        parts.append(buf.decode("utf-8", errors="replace"))
        return "".join(parts)

    def token_bytes(self, i: int) -> bytes:
        t = self.id_to_token[int(i)]
        if t in self.special_tokens:
            return b""
        return bytes(BYTE_DECODER[c] for c in t)


def to_tokenizer_json(vocab: Dict[str, int], merges: Sequence[Tuple[str, str]],
                      special_tokens: Sequence[str] = SPECIAL_TOKENS) -> dict:
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for s in special_tokens
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": SPLIT_PATTERN}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [f"{a} {b}" for a, b in merges],
        },
    }


def tokenizer_config(model_max_length: int, special_tokens: Sequence[str] = SPECIAL_TOKENS) -> dict:
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "eos_token": EOS,
        "unk_token": None,
        "pad_token": None,
        "add_bos_token": False,
        "add_eos_token": False,
        "model_max_length": model_max_length,
        "clean_up_tokenization_spaces": False,
        "additional_special_tokens": [s for s in special_tokens if s != EOS],
    }


def save(folder: str, vocab: Dict[str, int], merges, model_max_length: int) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(to_tokenizer_json(vocab, merges), f, ensure_ascii=False)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config(model_max_length), f, indent=2)


def js_encode(folder: str, texts: Sequence[str]) -> List[dict]:
    """[{ids, roundtrip}] of each text by @huggingface/tokenizers (encode_js.cjs in node) with folder's tokenizer."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(list(texts), f, ensure_ascii=False)
        tmp = f.name
    try:
        r = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "encode_js.cjs"),
                            folder, tmp], capture_output=True, text=True, check=True)
    finally:
        os.unlink(tmp)
    return json.loads(r.stdout)


def check_against_js(folder: str, texts: Sequence[str], encoder: "Encoder | None" = None) -> int:
    """Encode texts with @huggingface/tokenizers (node) and with this module; raise on any difference.
    Returns the number of tokens compared."""
    enc = encoder or Encoder.from_tokenizer_json(os.path.join(folder, "tokenizer.json"))
    js = js_encode(folder, texts)
    n = 0
    for t, j in zip(texts, js):
        py = enc.encode(t)
        if py != j["ids"]:
            k = next((i for i, (a, b) in enumerate(zip(py, j["ids"])) if a != b), min(len(py), len(j["ids"])))
            raise AssertionError(f"tokenizer mismatch at token {k} for text {t[:80]!r}: "
                                 f"py {py[max(0, k - 3):k + 5]} js {j['ids'][max(0, k - 3):k + 5]}")
        if not j["roundtrip"] or enc.decode(py) != t:
            raise AssertionError(f"decode roundtrip failed for {t[:80]!r}")
        n += len(py)
    return n


SAMPLE_TEXTS = [
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "function add(a: number, b: number) {\n  return a + b;\n}\n",
    "\tindented_with_tab = 1\r\n\tcrlf_line = 'x'\r\n",
    "const s = \"héllo wörld — ünïcödé, 日本語のテキスト, Ελληνικά, русский\";\n",
    "emoji = '😀🎉👍🏽 👨‍👩‍👧'  # zero-width joiners\n",
    "x  =   1\n\n\n        y=2    \n  \t  \n",
    "<|endoftext|>def f():<fim_prefix>a<fim_suffix>b<fim_middle>c<file_sep>",
    "numbers 1234567 3.14159 0xFFEE 1e-9 __init__ __name__ self._private",
    "   leading spaces and trailing spaces   ",
    "a\u00a0b\u2003c\u200bd\ufeffe\x85f\x0bg\x0ch",
    "",
    "\n",
    " ",
    "'s 't 're 've 'm 'll 'd",
    "if (a && b || !c) { return x?.y ?? z; } // comment\n/* block */",
]
