"""Export a LlamaForCausalLM to ONNX in Ghostline's decoder contract, and write the HF model folder files.

Contract (opset 17):
  inputs  input_ids int64 [batch, seq]; attention_mask int64 [batch, past+seq]; position_ids int64
          [batch, seq]; past_key_values.{i}.key / .value float32 [batch, kv_heads, past, head_dim];
          num_logits_to_keep int64 0-d (N > 0: logits of the last N positions; 0: all positions)
  outputs logits float32 [batch, N, vocab]; present.{i}.key / .value [batch, kv_heads, past+seq, head_dim]

usage: /usr/bin/python3 -m tools.model.export_onnx --checkpoint ckpt.pt --out models/name [--check]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import warnings

import numpy as np
import torch

from . import HERE, REPO
from .llama import LlamaConfig, LlamaForCausalLM, save_safetensors, state_dict_hf


class OnnxWrapper(torch.nn.Module):
    def __init__(self, model: LlamaForCausalLM):
        super().__init__()
        self.m = model

    def forward(self, input_ids, attention_mask, position_ids, *rest):
        n = self.m.cfg.num_hidden_layers
        past = [(rest[2 * i], rest[2 * i + 1]) for i in range(n)]
        keep = rest[2 * n]
        return flat_outputs(*self.m(input_ids, attention_mask, position_ids, past, keep))


def flat_outputs(logits, presents) -> tuple:
    """(logits, present.0.key, present.0.value, ...): the output order of every exported decoder."""
    return (logits,) + tuple(t for kv in presents for t in kv)


def io_names(n_layers: int):
    inputs = ["input_ids", "attention_mask", "position_ids"]
    outputs = ["logits"]
    for i in range(n_layers):
        inputs += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outputs += [f"present.{i}.key", f"present.{i}.value"]
    inputs.append("num_logits_to_keep")
    return inputs, outputs


def export(model: LlamaForCausalLM, path: str, opset: int = 17) -> None:
    cfg = model.cfg
    model = model.float().eval()
    b, s, p = 2, 3, 4
    kvh, hd = cfg.num_key_value_heads, cfg.head_dim
    args = [torch.randint(0, cfg.vocab_size, (b, s)), torch.ones(b, p + s, dtype=torch.long),
            (torch.arange(s) + p)[None].expand(b, s).contiguous()]
    for _ in range(cfg.num_hidden_layers):
        args += [torch.randn(b, kvh, p, hd), torch.randn(b, kvh, p, hd)]
    args.append(torch.tensor(1, dtype=torch.long))
    inputs, outputs = io_names(cfg.num_hidden_layers)
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
           "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "kept"}}
    for i in range(cfg.num_hidden_layers):
        for kind in ("key", "value"):
            dyn[f"past_key_values.{i}.{kind}"] = {0: "batch", 2: "past"}
            dyn[f"present.{i}.{kind}"] = {0: "batch", 2: "total"}
    trace_export(OnnxWrapper(model), args, path, inputs, outputs, dyn, opset)


def trace_export(wrapper: torch.nn.Module, args, path: str, inputs, outputs, dynamic_axes: dict,
                 opset: int = 17) -> None:
    """torch.onnx's trace of wrapper (a module holding the model as .m) into path, with the initializers renamed
    to the model's own (HF) names, checked and saved."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(wrapper, tuple(args), path, input_names=inputs, output_names=outputs,
                          dynamic_axes=dynamic_axes, opset_version=opset, do_constant_folding=True)
    import onnx
    m = onnx.load(path)
    # "m.model.layers.0..." (the wrapper's attribute) -> "model.layers.0..."
    ren = {i.name: i.name[2:] for i in m.graph.initializer if i.name.startswith("m.")}
    for i in m.graph.initializer:
        if i.name in ren:
            i.name = ren[i.name]
    for n in m.graph.node:
        for j, x in enumerate(n.input):
            if x in ren:
                n.input[j] = ren[x]
    onnx.checker.check_model(m)  # by attribute: make_random_model.external_data_io swaps these for > 2 GB models
    onnx.save(m, path)


def write_folder_files(model: LlamaForCausalLM, folder: str, extra_config: dict | None = None,
                       safetensors: bool = True) -> None:
    cfg = model.cfg
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg.to_hf(extra_config), f, indent=2)
    with open(os.path.join(folder, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": cfg.bos_token_id, "eos_token_id": [cfg.eos_token_id],
                   "do_sample": False, "max_new_tokens": 64}, f, indent=2)
    if safetensors:
        save_safetensors(os.path.join(folder, "model.safetensors"), state_dict_hf(model),
                         {"format": "pt"})


# ---------------------------------------------------------------- checking against onnxruntime-node

def _cases(model: LlamaForCausalLM, seed: int = 0):
    """Scenarios the engine uses: prefill (past 0), decode, batch with left padding, chunked prefill,
    all-logits."""
    cfg = model.cfg
    g = torch.Generator().manual_seed(seed)
    n, kvh, hd = cfg.num_hidden_layers, cfg.num_key_value_heads, cfg.head_dim

    def empty(b):
        return [(torch.zeros(b, kvh, 0, hd), torch.zeros(b, kvh, 0, hd)) for _ in range(n)]

    cases = []

    def run(name, ids, mask, pos, past, keep):
        with torch.no_grad():
            logits, pres = model(ids, mask, pos, past, torch.tensor(keep))
        cases.append((name, ids, mask, pos, past, keep, logits, pres))
        return logits, pres

    ids = torch.randint(0, cfg.vocab_size, (1, 12), generator=g)
    _, pres = run("prefill_b1", ids, torch.ones(1, 12, dtype=torch.long), torch.arange(12)[None], empty(1), 1)
    nid = torch.randint(0, cfg.vocab_size, (1, 1), generator=g)
    run("decode_b1", nid, torch.ones(1, 13, dtype=torch.long), torch.tensor([[12]]), pres, 1)
    # batch 2, second row left-padded by 3
    ids = torch.randint(0, cfg.vocab_size, (2, 8), generator=g)
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, :3] = 0
    pos = torch.stack([torch.arange(8), torch.clamp(torch.arange(8) - 3, min=0)])
    _, pres = run("prefill_b2_pad", ids, mask, pos, empty(2), 2)
    ids2 = torch.randint(0, cfg.vocab_size, (2, 4), generator=g)
    mask2 = torch.cat([mask, torch.ones(2, 4, dtype=torch.long)], 1)
    pos2 = pos[:, -1:] + 1 + torch.arange(4)[None]
    run("chunk_b2_past8_seq4", ids2, mask2, pos2, pres, 4)
    ids = torch.randint(0, cfg.vocab_size, (1, 5), generator=g)
    run("all_logits", ids, torch.ones(1, 5, dtype=torch.long), torch.arange(5)[None], empty(1), 0)
    return cases


def check_with_node(model: LlamaForCausalLM, onnx_path: str, tol: float = 1e-4) -> float:
    model = model.float().eval()
    cases = _cases(model)
    tmp = tempfile.mkdtemp(prefix="ghostline-onnx-check-")
    manifest = []
    for ci, (name, ids, mask, pos, past, keep, logits, pres) in enumerate(cases):
        entry = {"name": name, "inputs": {}, "outputs": {}}

        def put(kind, key, t, dtype):
            fn = f"{ci}_{kind}_{key}.bin"
            a = t.detach().numpy().astype(dtype)
            a.tofile(os.path.join(tmp, fn))
            entry[kind][key] = {"file": fn, "dtype": "int64" if dtype == np.int64 else "float32",
                                "dims": list(a.shape)}

        put("inputs", "input_ids", ids, np.int64)
        put("inputs", "attention_mask", mask, np.int64)
        put("inputs", "position_ids", pos, np.int64)
        for i, (k, v) in enumerate(past):
            put("inputs", f"past_key_values.{i}.key", k, np.float32)
            put("inputs", f"past_key_values.{i}.value", v, np.float32)
        put("inputs", "num_logits_to_keep", torch.tensor(keep), np.int64)
        put("outputs", "logits", logits, np.float32)
        for i, (k, v) in enumerate(pres):
            put("outputs", f"present.{i}.key", k, np.float32)
            put("outputs", f"present.{i}.value", v, np.float32)
        manifest.append(entry)
    with open(os.path.join(tmp, "cases.json"), "w") as f:
        json.dump(manifest, f)
    script = os.path.join(HERE, "check_onnx.cjs")
    r = subprocess.run(["node", script, onnx_path, tmp], capture_output=True, text=True, cwd=REPO)
    print(r.stdout.strip())
    if r.returncode != 0:
        print(r.stderr)
        raise SystemExit("onnx check failed")
    worst = json.loads(r.stdout.strip().splitlines()[-1])["max_abs_diff"]
    if worst > tol:
        raise SystemExit(f"onnx check: max abs diff {worst} > {tol}")
    return worst


def load_checkpoint(path: str) -> LlamaForCausalLM:
    ck = torch.load(path, map_location="cpu")
    cfg = LlamaConfig.from_dict(ck["config"])
    model = LlamaForCausalLM(cfg)
    sd = ck["model"]
    sd = {k: v.float() for k, v in sd.items()}
    model.load_state_dict(sd, strict=False)
    return model.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True, help="model folder")
    ap.add_argument("--no-safetensors", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    model = load_checkpoint(a.checkpoint)
    onnx_path = os.path.join(a.out, "onnx", "model.onnx")
    export(model, onnx_path)
    write_folder_files(model, a.out, safetensors=not a.no_safetensors)
    if a.check:
        print("max abs diff vs torch:", check_with_node(model, onnx_path))


if __name__ == "__main__":
    main()
