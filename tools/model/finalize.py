"""Export a training checkpoint into the shipped model folder, through the same converter as any checkpoint.

  1. the checkpoint as a Hugging Face folder in <work>/ckpt: model.safetensors (bf16, HF names), config.json,
     generation_config.json, the tokenizer files of --model;
  2. `node dist/cli.js convert` (src/converter: Ghostline's lean graph) into <work>/fp32, <work>/int8 (MatMulNBits
     int8, block 32, accuracy level 4) and <work>/q4 (int4, same);
  3. validation loss of torch fp32 and of every ONNX variant in onnxruntime-node (tools/model/onnx_eval.cjs) on the
     same held-out rows, plus a rough speed measurement; the fp32 variant must match torch within 1e-3 nats/token
     (torch runs the bf16-rounded weights the converter reads); results in <run>/export.json;
  4. the chosen variant goes to models/<name>/onnx/ (with its external data file, stale ONNX files removed), with
     the converter's config.json, generation_config.json, model.safetensors (bf16, HF names) if the folder stays
     within the size budget, the licence manifest;
  5. greedy completions of a few prompts through the shipped folder (tokenizer + ONNX in node).

Needs the built sources: `node esbuild.js` (dist/cli.js, the converter) and `npx tsc -p .` (out/src/engine/model,
the runtime that onnx_eval.cjs and greedy.cjs feed).

usage: /usr/bin/python3 -m tools.model.finalize --run tools/model/runs/r1 --model models/ghostline-code-small
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess

import torch
import torch.nn.functional as F

from . import HERE, REPO, bpe, dir_size, load_jsonl
from .export_onnx import load_checkpoint, write_folder_files
from .llama import save_safetensors, state_dict_hf
from .train import build_valid, tokenize_corpus

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


VARIANTS = ("fp32", "int8", "q4")  # `ghostline convert --quant` values
CLI = os.path.join(REPO, "dist", "cli.js")
ENGINE = os.path.join(REPO, "out", "src", "engine", "model", "onnxModel.js")
FP32_TOL = 1e-3  # nats/token between the fp32 variant and torch fp32 on the same weights


def write_checkpoint_folder(model, folder: str, tokenizer_dir: str, extra_config: dict) -> None:
    """The model as a Hugging Face checkpoint folder: what `ghostline convert` reads (and what ships as
    model.safetensors): bf16 weights with HF names, config.json (torch_dtype bfloat16: transformers reads it as the
    dtype of the stored weights), generation_config.json, the tokenizer files."""
    write_folder_files(model, folder, extra_config=dict(extra_config, torch_dtype="bfloat16"), safetensors=False)
    sd = {k: v.to(torch.bfloat16) for k, v in state_dict_hf(model).items()}
    save_safetensors(os.path.join(folder, "model.safetensors"), sd, {"format": "pt"})
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(tokenizer_dir, f), os.path.join(folder, f))


def convert(ckpt: str, out: str, quant: str) -> str:
    """`ghostline convert` into `out`; returns the ONNX file (its weights are in the .onnx_data file next to it)."""
    r = subprocess.run(["node", CLI, "convert", "--from", ckpt, "--out", out, "--quant", quant],
                       capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"ghostline convert --quant {quant} failed")
    print(r.stderr.strip().splitlines()[-1].strip(), flush=True)  # "wrote ... in N s" after the progress bar
    files = [f for f in os.listdir(os.path.join(out, "onnx")) if f.endswith(".onnx")]
    if len(files) != 1:
        raise SystemExit(f"{out}/onnx: expected one .onnx file, found {files}")
    return os.path.join(out, "onnx", files[0])


def onnx_files(onnx_path: str):
    """The ONNX file and its external data files (named after it, as the converter writes them)."""
    d, base = os.path.dirname(onnx_path), os.path.basename(onnx_path)
    return sorted(f for f in os.listdir(d) if f == base or f.startswith(base + "_data") or f.startswith(base + ".data"))


def install_variant(onnx_path: str, variant_dir: str, model_dir: str) -> None:
    """models/<name>/onnx/ holds exactly the chosen variant (graph + external data); its config.json and
    generation_config.json are the converter's (config.json records the graph and the quantization)."""
    od = os.path.join(model_dir, "onnx")
    shutil.rmtree(od, ignore_errors=True)  # stale ONNX files of an earlier export
    os.makedirs(od)
    for f in onnx_files(onnx_path):
        shutil.copy(os.path.join(os.path.dirname(onnx_path), f), os.path.join(od, f))
    for f in ("config.json", "generation_config.json"):
        shutil.copy(os.path.join(variant_dir, f), os.path.join(model_dir, f))


def main():
    ap = argparse.ArgumentParser(description="needs `node esbuild.js` (dist/cli.js) and `npx tsc -p .` (out/) first")
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True, help="model folder (already holds the tokenizer files)")
    ap.add_argument("--checkpoint", default="ckpt_best.pt")
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--work", default="/tmp/ghostline-export")
    ap.add_argument("--eval-rows", type=int, default=16)
    ap.add_argument("--budget-mb", type=float, default=25.0)
    ap.add_argument("--max-loss-increase", type=float, default=0.02, help="nats/token allowed for a quantized variant")
    a = ap.parse_args()
    for f, how in ((CLI, "node esbuild.js"), (ENGINE, "npx tsc -p .")):
        if not os.path.exists(f):
            raise SystemExit(f"{os.path.relpath(f, REPO)} not found: run `{how}` in {REPO} first")

    torch.set_num_threads(2)
    model = load_checkpoint(os.path.join(a.run, a.checkpoint))
    ck_state = torch.load(os.path.join(a.run, a.checkpoint), map_location="cpu")["state"]
    cfg = model.cfg
    work = os.path.join(a.work, os.path.basename(a.model.rstrip("/")))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # held-out rows (the validation rows the training log uses: same builder and seed)
    enc = bpe.Encoder.from_tokenizer_json(os.path.join(a.model, "tokenizer.json"))
    valid_docs = load_jsonl(os.path.join(a.data, "valid.jsonl"))
    va_ids, va_off = tokenize_corpus(enc, valid_docs, os.path.join(a.data, f"tok{len(enc.vocab)}", "valid.npz"))
    rows, _ = build_valid(enc, valid_docs, va_ids, va_off, cfg.max_position_embeddings, 48, 0)
    rows = rows[: a.eval_rows]
    rows_path = os.path.join(work, "rows.bin")
    rows.numpy().astype("<i8").tofile(rows_path)

    def torch_nll():
        with torch.no_grad():
            logits, _ = model(rows[:, :-1])
            return float(F.cross_entropy(logits.reshape(-1, cfg.vocab_size), rows[:, 1:].reshape(-1)))

    # the checkpoint's fp32 weights, then the bf16-rounded ones that ship and that the converter reads
    ckpt_nll = torch_nll()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).float())
    fp32_nll = torch_nll()

    ckpt = os.path.join(work, "ckpt")
    write_checkpoint_folder(model, ckpt, a.model, {"ghostline": {
        "fim": {"prefix": bpe.FIM_PREFIX, "suffix": bpe.FIM_SUFFIX, "middle": bpe.FIM_MIDDLE, "mode": "psm"},
        "trained_context": cfg.max_position_embeddings}})
    variants = {q: convert(ckpt, os.path.join(work, q), q) for q in VARIANTS}

    tb = torch.tensor([len(enc.token_bytes(i)) for i in range(cfg.vocab_size)], dtype=torch.float64)
    bytes_per_token = float(tb[rows[:, 1:]].sum()) / rows[:, 1:].numel()
    res = {"checkpoint": a.checkpoint, "step": ck_state["step"], "tokens": ck_state["tokens"],
           "minutes": ck_state["elapsed"] / 60, "graph": "lean-v1", "exporter": "ghostline convert (src/converter)",
           "eval_tokens": rows[:, 1:].numel(), "bytes_per_token": bytes_per_token,
           "torch_fp32": {"nll": fp32_nll, "bpb": fp32_nll / math.log(2) / bytes_per_token,
                          "weights": "bf16-rounded (as shipped)"},
           "torch_fp32_checkpoint": {"nll": ckpt_nll, "bpb": ckpt_nll / math.log(2) / bytes_per_token}}
    for name, p in variants.items():
        r = subprocess.run(["node", os.path.join(HERE, "onnx_eval.cjs"), p, rows_path, str(len(rows)),
                            str(rows.shape[1]), "2"], capture_output=True, text=True, cwd=REPO)
        if r.returncode != 0:
            print(r.stderr)
            raise SystemExit(f"onnx_eval failed for {name}")
        o = json.loads(r.stdout.strip().splitlines()[-1])
        o["bpb"] = o["nll"] / math.log(2) / bytes_per_token
        o["bytes"] = sum(os.path.getsize(os.path.join(os.path.dirname(p), f)) for f in onnx_files(p))
        res[name] = o
        print(name, o, flush=True)
    # the converter is exact against PyTorch (CI, four families); here on this checkpoint's own held-out rows
    diff = res["fp32"]["nll"] - fp32_nll
    res["fp32_onnx_vs_torch_nll"] = diff
    print(f"fp32 ONNX vs torch fp32: {diff:+.2e} nats/token", flush=True)
    if not abs(diff) <= FP32_TOL:
        raise SystemExit(f"fp32 ONNX NLL {res['fp32']['nll']:.6f} vs torch {fp32_nll:.6f}: "
                         f"differs by more than {FP32_TOL} nats/token")

    # choose: the smallest loss among variants that fit the budget (with the other files); a quantized variant
    # must stay within max-loss-increase of fp32
    other = sum(os.path.getsize(os.path.join(a.model, f)) for f in ("tokenizer.json", "tokenizer_config.json"))
    budget = a.budget_mb * 1e6 - other - 300_000  # config files, manifest, card
    ok = [n for n in VARIANTS if res[n]["bytes"] < budget and
          (n == "fp32" or res[n]["nll"] - res["fp32"]["nll"] <= a.max_loss_increase)]
    if not ok:
        raise SystemExit("no variant fits")
    chosen = min(ok, key=lambda n: (round(res[n]["nll"], 3), res[n]["bytes"]))
    res["chosen"] = chosen
    print("chosen:", chosen, flush=True)

    # write the model folder
    install_variant(variants[chosen], os.path.join(work, chosen), a.model)
    st = os.path.join(a.model, "model.safetensors")
    shutil.copy(os.path.join(ckpt, "model.safetensors"), st)
    if dir_size(a.model) > a.budget_mb * 1e6 - 200_000:
        os.remove(st)
        res["safetensors"] = "not shipped (size budget)"
    else:
        res["safetensors"] = "bf16"
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
