"""Write a tokenizer folder (tokenizer.json, tokenizer_config.json) of a given vocabulary size from the merges
trained by train_tokenizer.py, and check it against @huggingface/tokenizers on the validation set.

usage: /usr/bin/python3 -m tools.model.make_tokenizer --bpe tools/model/runs/tok/bpe_full.json --size 4096 --out DIR
           [--max-length 512] [--check tools/model/data/valid.jsonl]
"""
import argparse
import json

from . import bpe, load_jsonl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bpe", required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--check", default=None, help="jsonl of documents to compare JS and Python encodings on")
    a = ap.parse_args()
    full = json.load(open(a.bpe, encoding="utf-8"))
    base = len(bpe.SPECIAL_TOKENS) + 256
    merges = [tuple(m) for m in full["merges"][: a.size - base]]
    vocab = {t: i for t, i in full["vocab"].items() if i < a.size}
    bpe.save(a.out, vocab, merges, a.max_length)
    texts = list(bpe.SAMPLE_TEXTS)
    if a.check:
        texts += [d["text"] for d in load_jsonl(a.check)]
    n = bpe.check_against_js(a.out, texts)
    print(f"{a.out}: vocab {len(vocab)}; JS == Python on {len(texts)} texts, {n} tokens")


if __name__ == "__main__":
    main()
