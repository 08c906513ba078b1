"""Make small random-weight Hugging Face *checkpoint* folders (safetensors, not ONNX) with torch references.

Why: the TypeScript converter (src/converter/) turns HF checkpoints into ONNX; CI has no torch, so these
folders and their float32 reference outputs are committed and the converter's graphs are checked against them.

For each case, test/fixtures/checkpoints/<case>/ gets:
  config.json                 the real HF fields of the architecture (head_dim = hidden_size / heads, not
                              written, as in the real configs), 2 layers, hidden 128, vocab 512
  model.safetensors           (or model-0000{1,2}-of-00002.safetensors + model.safetensors.index.json)
                              tensors named as transformers names them, in the case's storage dtype
  tokenizer.json, tokenizer_config.json, generation_config.json   copied from test/fixtures/families/<family>/
  reference.json              torch float32 outputs computed from the weights *as stored* (rounded to
                              bf16/fp16, upcast to float32): prompt_ids, greedy_ids (16), prefill_last_logits,
                              logits_by_step (4 rows), long_prompt_ids (300) + long_greedy_ids (8) +
                              long_prefill_last_logits, min_margin (smallest top1-top2 gap over all greedy steps)

Cases:
  qwen2         qwen2.5-coder layout (q/k/v bias, GQA 4/2, head_dim 32), bf16, tied embeddings
  llama         smollm2 layout (GQA 2/1, head_dim 64), fp16, sharded into 2 files + index, tied
  llama-untied  deepseek-coder layout (MHA 4/4, head_dim 32), fp32, lm_head.weight, rope_scaling linear x4
  starcoder2    starcoder2 layout (LayerNorm + biases everywhere, gelu tanh MLP, GQA 2/1, head_dim 64), bf16, tied

The model classes are make_family_fixtures.py's FamilyLM (with 2 layers); seeds are tried until the greedy
continuation varies, avoids special tokens, and every greedy step has a clear top1-top2 margin.

usage: OMP_NUM_THREADS=1 nice -n 10 /usr/bin/python3 -m tools.model.make_checkpoint_fixtures [case ...]
           [--out test/fixtures/checkpoints]
(needs node + node_modules/@huggingface/tokenizers for the prompt ids, like make_family_fixtures.py)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil

import numpy as np
import torch
import torch.nn as nn

from . import REPO
from .bpe import js_encode
from .fixtures import greedy_rows, min_margin
from .llama import save_safetensors
from .make_family_fixtures import FAMILIES, HIDDEN, FamilyLM, Layer, config_json, init_weights

FAM_ROOT = os.path.join(REPO, "test", "fixtures", "families")
OUT_ROOT = os.path.join(REPO, "test", "fixtures", "checkpoints")
N_LAYERS, N_GREEDY, N_STEP_ROWS, N_LONG, N_LONG_GREEDY = 2, 16, 4, 300, 8
MIN_MARGIN = 0.01  # required top1-top2 gap at every greedy step (fp32 reimplementations differ by ~1e-5)
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}

CASES = {
    "qwen2": dict(family="qwen2.5-coder", dtype="bfloat16", shards=1, heads=4, kv_heads=2, inter=256,
                  prompt="def area(r):\n    return 3.14 * r"),
    "llama": dict(family="smollm2", dtype="float16", shards=2, heads=2, kv_heads=1, inter=256,
                  prompt="def add(a, b):\n    return a"),
    # fp32 storage: a smaller MLP keeps the folder near 1.5 MB
    "llama-untied": dict(family="deepseek-coder", dtype="float32", shards=1, heads=4, kv_heads=4, inter=128,
                         prompt="for line in open(path):\n    print"),
    "starcoder2": dict(family="starcoder2", dtype="bfloat16", shards=1, heads=2, kv_heads=1, inter=256,
                       prompt="class Stack:\n    def push(self, x"),
}


def f32_list(t: torch.Tensor) -> list:
    """Shortest decimal that round-trips each float32 (<= 9 significant digits)."""
    return [float(str(np.float32(x))) for x in t.detach().float().numpy()]


def build(f: dict, vocab: int, seed: int, dtype: torch.dtype, special: list, pad: list) -> FamilyLM:
    torch.manual_seed(seed)
    model = FamilyLM(f, vocab).eval()
    model.model.layers = nn.ModuleList([Layer(f) for _ in range(N_LAYERS)])
    init_weights(model, seed, special, pad)
    with torch.no_grad():  # the reference uses the weights as stored: round, then compute in float32
        for p in model.parameters():
            p.copy_(p.to(dtype).float())
    return model


def greedy(model: FamilyLM, ids: list, n: int):
    """n greedy tokens with the KV cache. rows[0] = logits of the last prompt position, rows[i] after tokens[i-1]."""
    return greedy_rows(model, ids, n - 1)


def recompute_diff(model: FamilyLM, ids: list, toks: list, rows: torch.Tensor) -> float:
    """Max |logit| difference between the KV-cache rows and one full forward of prompt + tokens[:-1]."""
    full = ids + toks[:-1]
    with torch.no_grad():
        logits, _ = model(torch.tensor([full]), torch.ones(1, len(full), dtype=torch.long),
                          torch.arange(len(full))[None])
    ref = logits[0, len(ids) - 1:]
    assert [int(r.argmax()) for r in ref] == toks, "KV cache and full recompute disagree on greedy tokens"
    return float((ref - rows).abs().max())


def hf_config(case: dict, f: dict, vocab: int, ids: dict) -> dict:
    d = config_json(case["family"], f, vocab, ids)  # the family's real HF fields
    d.pop("_comment", None)
    d.pop("head_dim", None)  # none of the four real configs carries head_dim (= hidden_size / heads)
    d.update(num_hidden_layers=N_LAYERS, intermediate_size=case["inter"], torch_dtype=case["dtype"])
    assert d["max_position_embeddings"] >= 1024
    return dict(sorted(d.items()))


def write_weights(out: str, model: FamilyLM, tied: bool, dtype: torch.dtype, shards: int) -> list:
    sd = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()
          if not (tied and k == "lm_head.weight")}
    if shards == 1:
        save_safetensors(os.path.join(out, "model.safetensors"), sd, {"format": "pt"})
        return ["model.safetensors"]
    # shard by layer: embeddings + first half of the layers in file 1, the rest (+ final norm, lm_head) in 2
    def shard_of(name: str) -> int:
        if name.startswith("model.layers."):
            return 0 if int(name.split(".")[2]) < N_LAYERS // 2 else 1
        return 0 if name == "model.embed_tokens.weight" else 1
    files = [f"model-{i + 1:05d}-of-{shards:05d}.safetensors" for i in range(shards)]
    weight_map = {}
    for i, fn in enumerate(files):
        part = {k: v for k, v in sd.items() if shard_of(k) == i}
        save_safetensors(os.path.join(out, fn), part, {"format": "pt"})
        weight_map.update({k: fn for k in part})
    total = sum(v.numel() * v.element_size() for v in sd.values())
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as fh:
        json.dump(index, fh, indent=2)
    return files + ["model.safetensors.index.json"]


def make(name: str, out_root: str) -> dict:
    case = CASES[name]
    fam_dir = os.path.join(FAM_ROOT, case["family"])
    f = dict(FAMILIES[case["family"]], heads=case["heads"], kv_heads=case["kv_heads"],
             head_dim=HIDDEN // case["heads"], inter=case["inter"])
    dtype = DTYPES[case["dtype"]]
    vocab = f["model_vocab"]
    with open(os.path.join(fam_dir, "tokenizer.json"), encoding="utf-8") as fh:
        tj = json.load(fh)
    ids = {t["content"]: t["id"] for t in tj["added_tokens"]}
    special = sorted(ids.values())
    n_tok = len(tj["model"]["vocab"])
    pad = list(range(n_tok, vocab))
    banned = set(special) | set(pad)
    enc = js_encode(fam_dir, [case["prompt"]])[0]
    if not enc["roundtrip"]:
        raise SystemExit(f"{name}: tokenizer does not round-trip the prompt")
    prompt_ids = enc["ids"]
    allowed = np.array([i for i in range(n_tok) if i not in banned])
    long_ids = [int(x) for x in np.random.default_rng(1000 + list(CASES).index(name)).choice(allowed, N_LONG)]

    for seed in range(500):
        model = build(f, vocab, seed, dtype, special, pad)
        rows, toks = greedy(model, prompt_ids, N_GREEDY)
        if len(set(toks)) < 5 or banned & set(toks) or min_margin(rows) < MIN_MARGIN:
            continue
        lrows, ltoks = greedy(model, long_ids, N_LONG_GREEDY)
        if len(set(ltoks)) >= 3 and not banned & set(ltoks) and min_margin(lrows) >= MIN_MARGIN:
            break
    else:
        raise SystemExit(f"{name}: no seed gave a clear, varied greedy continuation")
    diff = max(recompute_diff(model, prompt_ids, toks, rows), recompute_diff(model, long_ids, ltoks, lrows))

    out = os.path.join(out_root, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for fn in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        shutil.copy(os.path.join(fam_dir, fn), os.path.join(out, fn))
    cfg = hf_config(case, f, vocab, ids)
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as fh:
        json.dump(cfg, fh, indent=2, ensure_ascii=False)
    weight_files = write_weights(out, model, f["tied"], dtype, case["shards"])
    ref = {
        "case": name, "family": case["family"], "model_type": cfg["model_type"], "storage_dtype": case["dtype"],
        "weight_files": weight_files, "tied": f["tied"], "num_hidden_layers": N_LAYERS,
        "head_dim": f["head_dim"], "rope_scaling": cfg.get("rope_scaling"), "seed": seed,
        "prompt": case["prompt"], "prompt_ids": prompt_ids, "greedy_ids": toks,
        "prefill_last_logits": f32_list(rows[0]),
        "logits_by_step": [f32_list(r) for r in rows[:N_STEP_ROWS]],
        "long_prompt_ids": long_ids, "long_greedy_ids": ltoks, "long_prefill_last_logits": f32_list(lrows[0]),
        "min_margin": round(min(min_margin(rows), min_margin(lrows)), 6),
        "kv_cache_vs_recompute_max_abs_diff": diff,
        "notes": "Computed by tools/model/make_checkpoint_fixtures.py with torch in float32 from the weights as "
                 "stored (rounded to the storage dtype, then upcast to float32). Positions 0..n-1, no padding. "
                 "greedy_ids[0] = argmax(prefill_last_logits); logits_by_step[0] = prefill_last_logits, "
                 "logits_by_step[i] = logits after feeding greedy_ids[i-1] (KV cache; full recompute agrees). "
                 "long_prompt_ids: random non-special ids, to test KV caches past 256 positions. "
                 "min_margin: smallest top1-top2 logit gap over all 16 + 8 greedy steps. "
                 "head_dim = hidden_size / num_attention_heads (not in config.json, as in the real configs)."
                 + (" rope_scaling linear: rotary positions divided by factor." if f["rope_factor"] else ""),
    }
    with open(os.path.join(out, "reference.json"), "w", encoding="utf-8") as fh:
        json.dump(ref, fh, indent=1, ensure_ascii=False)
    sizes = {fn: os.path.getsize(os.path.join(out, fn)) for fn in sorted(os.listdir(out))}
    print(f"{name}: seed {seed}, {len(prompt_ids)} prompt ids, greedy {toks}, long greedy {ltoks}, "
          f"min margin {ref['min_margin']}, kv/recompute diff {diff:.2e}, {sum(sizes.values()) / 1e6:.3f} MB")
    for fn, n in sizes.items():
        print(f"  {fn:40s} {n:9d}")
    return ref


def main():
    ap = argparse.ArgumentParser(description="random-weight HF checkpoint folders with torch references")
    ap.add_argument("cases", nargs="*", help=f"default: all ({', '.join(CASES)})")
    ap.add_argument("--out", default=OUT_ROOT, help="folder that gets one folder per case (default %(default)s)")
    a = ap.parse_args()
    if set(a.cases) - set(CASES):
        ap.error(f"unknown cases {sorted(set(a.cases) - set(CASES))}")
    torch.set_num_threads(1)
    for name in a.cases or list(CASES):
        make(name, a.out)


if __name__ == "__main__":
    main()
