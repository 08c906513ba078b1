"""Generate a random-weight model folder with the exact shape of a real model, for benchmarks (not committed).

Builds tools/model/llama.py's LlamaForCausalLM (q/k/v bias, GQA, rope theta, tied embeddings) with random
fp32 weights, exports it with tools/model/export_onnx.py's contract, and writes a folder the engine loads:

  OUT/config.json, generation_config.json, tokenizer.json, tokenizer_config.json
  OUT/onnx/model.onnx + model.onnx_data   fp32, weights as external data (the Qwen2.5-Coder-0.5B shape is
                                          ~2.5 GB: more than one protobuf can hold)
  OUT/onnx/model_q4.onnx                  4-bit MatMulNBits, by tools/model/quantize_q4.py (unless --no-q4);
                                          the engine picks model_q4.onnx first when it is present

The tokenizer is copied from --tokenizer (default: models/ghostline-code-small, else test/fixtures/tiny-llama):
its vocabulary is smaller than the logits (allowed: extra logits columns are padding). Random weights make
random text: time with fixed token counts.

--from-checkpoint DIR: the weights, shape and tokenizer of a Hugging Face checkpoint folder instead (llama or
qwen2, tied embeddings; e.g. tools/model/make_random_checkpoint.py's bf16 output), so torch.onnx's graph holds
the same weights as `ghostline convert` and llama.cpp's GGUF of that checkpoint (the benchmark's three-way
comparison). --shape, --layers, --seed, --std and --tokenizer are then ignored.

usage: nice -n 10 /usr/bin/python3 -m tools.model.make_random_model --out /tmp/ghostline-bench/qwen05b-shape
           [--shape qwen2.5-coder-0.5b|smollm2-135m|tiny] [--layers N] [--seed S] [--std 0.02]
           [--from-checkpoint DIR] [--no-q4] [--q4-only] [--accuracy-level N] [--check] [--compare]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import time

import torch

from . import REPO, export_onnx
from .llama import LlamaConfig, LlamaForCausalLM, load_safetensors
# The shapes and tokenizer helpers live in make_random_checkpoint.py (numpy only), shared by both generators.
from .make_random_checkpoint import SHAPES, default_tokenizer_dir, shape_fields, tokenizer_info
from .quantize_q4 import compare_in_node, quantize_q4, save_model_auto


@contextlib.contextmanager
def no_default_init():
    """Skip nn.Linear / nn.Embedding default init (kaiming on ~0.5B parameters): init_weights overwrites it."""
    saved = (torch.nn.Linear.reset_parameters, torch.nn.Embedding.reset_parameters)
    torch.nn.Linear.reset_parameters = lambda self: None
    torch.nn.Embedding.reset_parameters = lambda self: None
    try:
        yield
    finally:
        torch.nn.Linear.reset_parameters, torch.nn.Embedding.reset_parameters = saved


@contextlib.contextmanager
def external_data_io():
    """export_onnx.export() re-reads the exported file, checks it and saves it with onnx.save: for models over
    2 GB, check by path instead and save the weights as one external data file `<model>.onnx_data`."""
    import onnx

    saved_check, saved_save = onnx.checker.check_model, onnx.save

    def check(m, full_check=False):
        pass  # an in-memory model over 2 GB cannot be checked: save() checks the saved file by path

    def save(m, path):
        save_model_auto(m, path, "always")
        onnx.checker.check_model(path)

    onnx.checker.check_model, onnx.save = check, save
    try:
        yield
    finally:
        onnx.checker.check_model, onnx.save = saved_check, saved_save


def export_external(model: LlamaForCausalLM, onnx_dir: str) -> str:
    """export_onnx.export() into an empty scratch folder (torch writes one file per tensor next to the model
    when it is over 2 GB), then move model.onnx + model.onnx_data into onnx_dir."""
    scratch = os.path.join(onnx_dir, ".export-scratch")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        with external_data_io():
            export_onnx.export(model, os.path.join(scratch, "model.onnx"))
        for f in ("model.onnx", "model.onnx_data"):
            os.replace(os.path.join(scratch, f), os.path.join(onnx_dir, f))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return os.path.join(onnx_dir, "model.onnx")


def build_config(shape: str, layers: int | None, tok_vocab: int, eos: int) -> tuple[LlamaConfig, dict]:
    fields, extra = shape_fields(shape, layers)
    if tok_vocab > fields["vocab_size"]:
        raise SystemExit(f"tokenizer has {tok_vocab} tokens, more than the shape's vocab {fields['vocab_size']}")
    cfg = LlamaConfig(**fields, bos_token_id=None, eos_token_id=eos)
    return cfg, extra


def load_checkpoint(ck: str) -> tuple[LlamaForCausalLM, dict, str]:
    """A tied llama / qwen2 Hugging Face checkpoint folder -> (model with its weights in fp32, extra config.json
    keys, shape label)."""
    hf = json.load(open(os.path.join(ck, "config.json")))
    mt = hf.get("model_type")
    if mt not in ("llama", "qwen2"):
        raise SystemExit(f"{ck}: model_type {mt} is not supported here (llama, qwen2)")
    if not hf.get("tie_word_embeddings", False):
        raise SystemExit(f"{ck}: only tied embeddings are supported (tools/model/llama.py ties them)")
    if hf.get("rope_scaling"):
        raise SystemExit(f"{ck}: rope_scaling is not supported here")
    heads = hf["num_attention_heads"]
    eos = hf.get("eos_token_id", 0)
    cfg = LlamaConfig(vocab_size=hf["vocab_size"], hidden_size=hf["hidden_size"],
                      intermediate_size=hf["intermediate_size"], num_hidden_layers=hf["num_hidden_layers"],
                      num_attention_heads=heads, num_key_value_heads=hf.get("num_key_value_heads", heads),
                      head_dim=hf.get("head_dim") or hf["hidden_size"] // heads,
                      rms_norm_eps=hf.get("rms_norm_eps", 1e-6), rope_theta=hf.get("rope_theta", 10000.0),
                      max_position_embeddings=hf["max_position_embeddings"],
                      attention_bias=mt == "qwen2" or hf.get("attention_bias", False), bos_token_id=None,
                      eos_token_id=eos[0] if isinstance(eos, list) else eos)
    extra = {k: hf[k] for k in ("architectures", "model_type", "use_sliding_window", "sliding_window",
                                "max_window_layers") if k in hf}
    with no_default_init():
        model = LlamaForCausalLM(cfg)
    path = os.path.join(ck, "model.safetensors")
    sd = load_safetensors(path)
    missing, unexpected = model.load_state_dict({k: v.float() for k, v in sd.items()}, strict=False)
    if set(missing) - {"lm_head.weight"} or unexpected:
        raise SystemExit(f"{path}: missing {sorted(set(missing) - {'lm_head.weight'})}, unexpected {sorted(unexpected)}")
    model.lm_head.weight = model.model.embed_tokens.weight  # load_state_dict keeps the tie; make it explicit
    return model, extra, os.path.basename(os.path.normpath(ck))


def file_sizes(folder: str) -> dict:
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(root, f)
            out[os.path.relpath(p, folder)] = os.path.getsize(p)
    return dict(sorted(out.items()))


def peak_rss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="model folder to write (created; existing files replaced)")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="qwen2.5-coder-0.5b")
    ap.add_argument("--layers", type=int, help="override the number of layers (quick tests)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--std", type=float, default=0.02, help="weight std (o/down proj: std/sqrt(2*layers))")
    ap.add_argument("--tokenizer", help="folder with tokenizer.json + tokenizer_config.json")
    ap.add_argument("--from-checkpoint", help="Hugging Face checkpoint folder: its weights, shape and tokenizer")
    ap.add_argument("--no-q4", action="store_true", help="fp32 only")
    ap.add_argument("--q4-only", action="store_true", help="delete the fp32 model after quantizing")
    ap.add_argument("--accuracy-level", type=int, default=0, help="MatMulNBits accuracy_level of the q4 model")
    ap.add_argument("--check", action="store_true", help="compare the fp32 ONNX model with torch in node")
    ap.add_argument("--compare", action="store_true", help="cosine similarity of fp32 vs q4 logits in node")
    a = ap.parse_args()

    t_all = time.time()
    t0 = time.time()
    if a.from_checkpoint:
        tok_dir = a.from_checkpoint
        tok_vocab, _ = tokenizer_info(tok_dir)
        model, extra, a.shape = load_checkpoint(a.from_checkpoint)
        cfg = model.cfg
        extra = dict(extra, _comment=f"weights of the checkpoint {os.path.abspath(a.from_checkpoint)}: "
                                     f"for benchmarks only")
    else:
        tok_dir = a.tokenizer or default_tokenizer_dir()
        tok_vocab, eos = tokenizer_info(tok_dir)
        cfg, extra = build_config(a.shape, a.layers, tok_vocab, eos)
        extra = dict(extra, _comment=f"random weights (seed {a.seed}, std {a.std}) with the shape {a.shape}: "
                                     f"for benchmarks only; tokenizer from {os.path.relpath(tok_dir, REPO)}")
        torch.manual_seed(a.seed)
        with no_default_init():
            model = LlamaForCausalLM(cfg)
        model.init_weights(std=a.std, seed=a.seed)
    model.eval()
    t_init = time.time() - t0
    print(f"{a.shape}: {model.num_params() / 1e6:.1f}M parameters, {cfg.num_hidden_layers} layers "
          f"({'loaded' if a.from_checkpoint else 'init'} {t_init:.1f}s)", flush=True)

    onnx_dir = os.path.join(a.out, "onnx")
    os.makedirs(onnx_dir, exist_ok=True)
    for f in os.listdir(onnx_dir):
        if f.startswith("model"):
            os.remove(os.path.join(onnx_dir, f))
    t0 = time.time()
    fp32 = export_external(model, onnx_dir)
    t_export = time.time() - t0
    print(f"exported {fp32} in {t_export:.1f}s", flush=True)
    export_onnx.write_folder_files(model, a.out, extra_config=extra, safetensors=False)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(tok_dir, f), os.path.join(a.out, f))
    summary = {"shape": a.shape, "layers": cfg.num_hidden_layers, "params": model.num_params(),
               "seed": a.seed, "init_s": round(t_init, 1), "export_s": round(t_export, 1)}
    if a.check:
        summary["check_max_abs_diff_vs_torch"] = export_onnx.check_with_node(model, fp32)
    del model

    if not a.no_q4:
        q4 = os.path.join(onnx_dir, "model_q4.onnx")
        summary["q4"] = quantize_q4(fp32, q4, accuracy_level=a.accuracy_level)
        print(f"quantized {q4}: {json.dumps(summary['q4'])}", flush=True)
        if a.compare:
            summary["q4_vs_fp32"] = compare_in_node(fp32, q4, vocab=tok_vocab)
        if a.q4_only:
            for f in ("model.onnx", "model.onnx_data"):
                os.remove(os.path.join(onnx_dir, f))
    summary["total_s"] = round(time.time() - t_all, 1)
    summary["peak_rss_mb"] = round(peak_rss_mb())
    summary["files"] = file_sizes(a.out)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
