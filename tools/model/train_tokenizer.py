"""Train the byte-level BPE on a sample of the training corpus and report bytes/token on the validation set
for several vocabulary sizes (prefixes of one merge list are the smaller vocabularies).

usage: /usr/bin/python3 -m tools.model.train_tokenizer --data tools/model/data --max-vocab 8192 --out DIR
"""
from __future__ import annotations

import argparse
import json
import os
import random
import time

from . import bpe, load_jsonl

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--sample-mb", type=float, default=10.0)
    ap.add_argument("--max-vocab", type=int, default=8192)
    ap.add_argument("--sizes", default="1024,2048,3072,4096,6144,8192")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    docs = load_jsonl(os.path.join(a.data, "train.jsonl"))
    rng.shuffle(docs)
    sample, n = [], 0
    for d in docs:
        sample.append(d["text"])
        n += len(d["text"])
        if n > a.sample_mb * 1e6:
            break
    t0 = time.time()
    vocab, merges = bpe.train_bpe(sample, a.max_vocab, verbose=True)
    print(f"trained {len(merges)} merges on {n / 1e6:.1f} MB in {time.time() - t0:.0f}s", flush=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bpe_full.json"), "w", encoding="utf-8") as f:
        json.dump({"vocab": vocab, "merges": merges}, f, ensure_ascii=False)
    valid = [d["text"] for d in load_jsonl(os.path.join(a.data, "valid.jsonl"))]
    vbytes = sum(len(t.encode("utf-8")) for t in valid)
    base = len(bpe.SPECIAL_TOKENS) + 256
    report = {}
    for size in [int(x) for x in a.sizes.split(",")]:
        m = merges[: size - base]
        v = {t: i for t, i in vocab.items() if i < size}
        enc = bpe.Encoder(v, m)
        ntok = sum(len(enc.encode_ordinary(t)) for t in valid)
        report[size] = {"valid_bytes": vbytes, "valid_tokens": ntok, "bytes_per_token": vbytes / ntok}
        print(size, report[size], flush=True)
    with open(os.path.join(a.out, "vocab_sizes.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
