"""Make the held-out rest-of-line eval set tools/model/eval/heldout.jsonl (fixed seed) from the validation
documents (whole packages held out of training).

Each sample: the cursor is at a random position inside a non-blank line (after its indentation, before its
last character); expected = the rest of that line (without the newline); prefix = up to 1500 characters
before the cursor; suffix = up to 500 characters after the end of that line (starting with its newline).

usage: /usr/bin/python3 -m tools.model.make_eval [--data tools/model/data] [--n 200]
"""
import argparse
import json
import os
import random
from collections import defaultdict

from . import HERE, load_jsonl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--out", default=os.path.join(HERE, "eval", "heldout.jsonl"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--prefix-chars", type=int, default=1500)
    ap.add_argument("--suffix-chars", type=int, default=500)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    docs = load_jsonl(os.path.join(a.data, "valid.jsonl"))
    by_lang = defaultdict(list)
    for d in docs:
        by_lang[d["language"]].append(d)
    quota = {"python": int(a.n * 0.45), "typescript": int(a.n * 0.275)}
    quota["javascript"] = a.n - sum(quota.values())
    samples = []
    for lang in sorted(quota):
        pool = sorted(by_lang.get(lang, []), key=lambda d: (d["package"], d["path"]))
        rng.shuffle(pool)
        per_pkg = defaultdict(int)
        per_file = defaultdict(int)
        got = 0
        tries = 0
        while got < quota[lang] and tries < 100000 and pool:
            tries += 1
            d = pool[tries % len(pool)]
            if per_pkg[d["package"]] >= max(10, quota[lang] // 3) or per_file[id(d)] >= 3:
                continue
            text = d["text"]
            lines = text.split("\n")
            cand = [i for i, l in enumerate(lines) if l.strip() and len(l) <= 200 and len(l.strip()) >= 2]
            if not cand:
                continue
            i = rng.choice(cand)
            line = lines[i]
            start = sum(len(l) + 1 for l in lines[:i])
            indent = len(line) - len(line.lstrip())
            c = rng.randint(indent, len(line.rstrip()) - 1)
            expected = line[c:]
            if not expected.strip():
                continue
            cur = start + c
            end = start + len(line)
            samples.append({"path": f"{d['package']}/{d['path']}", "language": lang,
                            "prefix": text[max(0, cur - a.prefix_chars):cur], "suffix": text[end:end + a.suffix_chars],
                            "expected": expected})
            per_pkg[d["package"]] += 1
            per_file[id(d)] += 1
            got += 1
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        for s in samples:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")
    langs = defaultdict(int)
    pk = defaultdict(int)
    for s in samples:
        langs[s["language"]] += 1
        pk[s["path"].split("/")[0]] += 1
    print(f"{len(samples)} samples -> {a.out} ({os.path.getsize(a.out) / 1e3:.0f} KB)", dict(langs), dict(pk))


if __name__ == "__main__":
    main()
