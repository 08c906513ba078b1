"""Export a training checkpoint into the shipped model folder.

  1. fp32 ONNX export (contract of export_onnx.py), checked against PyTorch in onnxruntime-node: by default
     the lean graph of export_fused.py (onnxruntime's fused CPU operators), --graph traced for torch.onnx's;
  2. weight-only quantized variants (MatMulNBits int8 and int4, block 32; int8 embedding rows);
  3. validation loss of torch fp32 and of every ONNX variant in onnxruntime-node on the same held-out rows,
     plus a rough speed measurement; results in <run>/export.json;
  4. the chosen variant goes to models/<name>/onnx/, with config.json, generation_config.json,
     model.safetensors (bf16, HF names) if the folder stays within the size budget, the licence manifest;
  5. greedy completions of a few prompts through the shipped folder (tokenizer + ONNX in node).

usage: /usr/bin/python3 tools/model/finalize.py --run tools/model/runs/r1 --model models/ghostline-code-small
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bpe  # noqa: E402
from export_fused import build_fused  # noqa: E402
from export_onnx import check_with_node, export, load_checkpoint, write_folder_files  # noqa: E402
from llama import save_safetensors, state_dict_hf  # noqa: E402
from quantize import quantize_model  # noqa: E402
from train import build_valid, load_jsonl, tokenize_corpus  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PROMPTS = [
    "def fibonacci(n):\n    if n <",
    "function add(a: number, b: number) {\n  return",
    "import os\n\ndef read_file(path):\n    with open(path) as f:\n        return",
    "const express = require('express');\nconst app = express();\n\napp.get('/', (req, res) => {\n  res.",
    "def is_even(n):\n    return <CURSOR>\n\n\nprint(is_even(4))\n",
    # ops that tools/model/synthetic.py leaves out
    "function multiply(a: number, b: number): number {\n  return",
    "def cube(x):\n    return",
    "const isOdd = (n: number): boolean =>",
    "def smallest(items):\n    return",
]


def dir_size(folder):
    return sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(folder) for f in fs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True, help="model folder (already holds the tokenizer files)")
    ap.add_argument("--checkpoint", default="ckpt_best.pt")
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--work", default="/tmp/ghostline-export")
    ap.add_argument("--eval-rows", type=int, default=16)
    ap.add_argument("--budget-mb", type=float, default=25.0)
    ap.add_argument("--graph", choices=("fused", "traced"), default="fused",
                    help="fused: export_fused.py (about 1.6x faster decode on the default model); traced: torch.onnx")
    ap.add_argument("--max-loss-increase", type=float, default=0.02, help="nats/token allowed for a quantized variant")
    a = ap.parse_args()

    torch.set_num_threads(2)
    model = load_checkpoint(os.path.join(a.run, a.checkpoint))
    ck_state = torch.load(os.path.join(a.run, a.checkpoint), map_location="cpu")["state"]
    cfg = model.cfg
    work = os.path.join(a.work, os.path.basename(a.model.rstrip("/")))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "onnx"))
    fp32 = os.path.join(work, "onnx", "model.onnx")
    if a.graph == "fused":
        build_fused(model, fp32)
    else:
        export(model, fp32)
    write_folder_files(model, work, safetensors=False)
    diff = check_with_node(model, fp32)
    print(f"fp32 ONNX vs torch: {diff:.2e}", flush=True)
    variants = {"fp32": fp32}
    for bits in (8, 4):
        p = os.path.join(work, "onnx", f"model_{'int8' if bits == 8 else 'q4'}.onnx")
        # accuracy_level 4 (int8 activations): measured 2.5-3.5 ms/token against 23-24 ms for level 0 with
        # 8-bit weights in onnxruntime-node 1.30 CPU, at the same validation loss
        quantize_model(fp32, p, bits=bits, block=32, accuracy_level=4)
        variants["int8" if bits == 8 else "q4"] = p

    # held-out rows (the validation rows the training log uses: same builder and seed)
    enc = bpe.Encoder.from_tokenizer_json(os.path.join(a.model, "tokenizer.json"))
    valid_docs = load_jsonl(os.path.join(a.data, "valid.jsonl"))
    va_ids, va_off = tokenize_corpus(enc, valid_docs, os.path.join(a.data, f"tok{len(enc.vocab)}", "valid.npz"))
    rows, _ = build_valid(enc, valid_docs, va_ids, va_off, cfg.max_position_embeddings, 48, 0)
    rows = rows[: a.eval_rows]
    rows_path = os.path.join(work, "rows.bin")
    rows.numpy().astype("<i8").tofile(rows_path)
    with torch.no_grad():
        logits, _ = model(rows[:, :-1])
        torch_nll = float(F.cross_entropy(logits.reshape(-1, cfg.vocab_size), rows[:, 1:].reshape(-1)))
    tb = torch.tensor([len(enc.token_bytes(i)) for i in range(cfg.vocab_size)], dtype=torch.float64)
    bytes_per_token = float(tb[rows[:, 1:]].sum()) / rows[:, 1:].numel()
    res = {"checkpoint": a.checkpoint, "step": ck_state["step"], "tokens": ck_state["tokens"],
           "minutes": ck_state["elapsed"] / 60, "graph": a.graph, "onnx_vs_torch_max_abs_diff": diff,
           "eval_tokens": rows[:, 1:].numel(), "bytes_per_token": bytes_per_token,
           "torch_fp32": {"nll": torch_nll, "bpb": torch_nll / math.log(2) / bytes_per_token}}
    for name, p in variants.items():
        r = subprocess.run(["node", os.path.join(HERE, "onnx_eval.cjs"), p, rows_path, str(len(rows)),
                            str(rows.shape[1]), "2"], capture_output=True, text=True, cwd=REPO)
        if r.returncode != 0:
            print(r.stderr)
            raise SystemExit(f"onnx_eval failed for {name}")
        o = json.loads(r.stdout.strip().splitlines()[-1])
        o["bpb"] = o["nll"] / math.log(2) / bytes_per_token
        o["bytes"] = os.path.getsize(p)
        res[name] = o
        print(name, o, flush=True)

    # choose: the smallest loss among variants that fit the budget (with the other files); a quantized variant
    # must stay within max-loss-increase of fp32
    other = sum(os.path.getsize(os.path.join(a.model, f)) for f in ("tokenizer.json", "tokenizer_config.json"))
    budget = a.budget_mb * 1e6 - other - 300_000  # config files, manifest, card
    ok = [n for n in ("fp32", "int8", "q4") if res[n]["bytes"] < budget and
          (n == "fp32" or res[n]["nll"] - res["fp32"]["nll"] <= a.max_loss_increase)]
    if not ok:
        raise SystemExit("no variant fits")
    chosen = min(ok, key=lambda n: (round(res[n]["nll"], 3), res[n]["bytes"]))
    res["chosen"] = chosen
    print("chosen:", chosen, flush=True)

    # write the model folder
    od = os.path.join(a.model, "onnx")
    shutil.rmtree(od, ignore_errors=True)
    os.makedirs(od)
    shutil.copy(variants[chosen], os.path.join(od, os.path.basename(variants[chosen])))
    write_folder_files(model, a.model, extra_config={"ghostline": {
        "fim": {"prefix": bpe.FIM_PREFIX, "suffix": bpe.FIM_SUFFIX, "middle": bpe.FIM_MIDDLE, "mode": "psm"},
        "trained_context": cfg.max_position_embeddings}}, safetensors=False)
    st = os.path.join(a.model, "model.safetensors")
    sd = {k: v.to(torch.bfloat16) for k, v in state_dict_hf(model).items()}
    save_safetensors(st, sd, {"format": "pt"})
    if dir_size(a.model) > a.budget_mb * 1e6 - 200_000:
        os.remove(st)
        res["safetensors"] = "not shipped (size budget)"
    else:
        res["safetensors"] = "bf16"
        # transformers reads torch_dtype as the dtype of the stored weights
        cp = os.path.join(a.model, "config.json")
        c = json.load(open(cp))
        c["torch_dtype"] = "bfloat16"
        with open(cp, "w") as f:
            json.dump(c, f, indent=2)
    man = os.path.join(a.data, "manifest.json")
    if os.path.exists(man):
        shutil.copy(man, os.path.join(a.model, "licences.json"))
    res["folder_bytes"] = dir_size(a.model)
    r = subprocess.run(["node", os.path.join(HERE, "greedy.cjs"), a.model, os.path.basename(variants[chosen]), "24"]
                       + PROMPTS, capture_output=True, text=True, cwd=REPO)
    print(r.stdout, r.stderr)
    res["greedy"] = json.loads(r.stdout) if r.returncode == 0 else r.stderr
    with open(os.path.join(a.run, "export.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "greedy"}, indent=1))


if __name__ == "__main__":
    main()
