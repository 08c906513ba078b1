"""Generate a random-weight Hugging Face checkpoint folder with the exact shape of a real model, for benchmarks
(never committed). numpy only (no torch): what `ghostline convert`, tools/model/export_gguf.py (llama.cpp's
GGUF) and tools/model/make_random_model.py --from-checkpoint (torch.onnx's graph) all start from, so the three
engines of the benchmark run the same weights.

  OUT/config.json               the real model's config.json field names (qwen2: no head_dim, q/k/v bias implied)
  OUT/generation_config.json
  OUT/model.safetensors         bf16, as Hugging Face ships these models; tied embeddings: no lm_head.weight
  OUT/tokenizer.json, tokenizer_config.json
                                copied from --tokenizer (default: models/ghostline-code-small, else
                                test/fixtures/tiny-llama), as make_random_model.py does: its vocabulary is
                                smaller than the embedding (the extra rows are padding)

Weights, seeded per tensor (numpy PCG64 seeded with [seed, tensor index], so a tensor does not depend on the
others): linear weights and the embedding N(0, std^2), o_proj/down_proj N(0, (std / sqrt(2 * layers))^2) (as
tools/model/llama.py's init_weights, so activations stay at a trained model's scale), q/k/v biases N(0, std^2)
(non-zero, so the bias path is exercised), norm weights 1 + N(0, 0.02^2). Rounded to bf16 (nearest even).

The folder is written under OUT.partial and renamed when complete.

usage: /usr/bin/python3 -m tools.model.make_random_checkpoint --out DIR
           [--shape qwen2.5-coder-0.5b|qwen2.5-coder-1.5b|smollm2-135m|tiny]
           [--layers N] [--seed S] [--std 0.02] [--tokenizer DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import time

import numpy as np

from . import REPO
from .safetensors_io import encode_header

QWEN2_EXTRA = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "use_sliding_window": False,
               "sliding_window": 32768}

# name -> (LlamaConfig fields of tools/model/llama.py, extra config.json keys); shared with make_random_model.py
SHAPES = {
    # https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B config.json
    "qwen2.5-coder-0.5b": (dict(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                                num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                                head_dim=64, rms_norm_eps=1e-6, rope_theta=1000000.0,
                                max_position_embeddings=32768, attention_bias=True),
                           dict(QWEN2_EXTRA, max_window_layers=24)),
    # https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B config.json (the converter's memory check)
    "qwen2.5-coder-1.5b": (dict(vocab_size=151936, hidden_size=1536, intermediate_size=8960,
                                num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                                head_dim=128, rms_norm_eps=1e-6, rope_theta=1000000.0,
                                max_position_embeddings=32768, attention_bias=True),
                           dict(QWEN2_EXTRA, max_window_layers=28)),
    # https://huggingface.co/HuggingFaceTB/SmolLM2-135M config.json
    "smollm2-135m": (dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                          num_attention_heads=9, num_key_value_heads=3, head_dim=64, rms_norm_eps=1e-5,
                          rope_theta=100000.0, max_position_embeddings=8192, attention_bias=False), {}),
    # quick checks: the qwen2 layout (q/k/v bias, GQA, rope 1e6) at toy size
    "tiny": (dict(vocab_size=4096, hidden_size=64, intermediate_size=192, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
                  rope_theta=1000000.0, max_position_embeddings=4096, attention_bias=True),
             dict(QWEN2_EXTRA, max_window_layers=2)),
}


def default_tokenizer_dir() -> str:
    for d in ("models/ghostline-code-small", "test/fixtures/tiny-llama"):
        if os.path.exists(os.path.join(REPO, d, "tokenizer.json")):
            return os.path.join(REPO, d)
    raise SystemExit("no tokenizer folder found: pass --tokenizer")


def tokenizer_info(d: str) -> tuple[int, int]:
    """(vocab size including added tokens, eos id) of a tokenizer.json + tokenizer_config.json folder."""
    tj = json.load(open(os.path.join(d, "tokenizer.json")))
    tc = json.load(open(os.path.join(d, "tokenizer_config.json")))
    ids = dict(tj["model"]["vocab"])
    for t in tj.get("added_tokens", []):
        ids[t["content"]] = t["id"]
    eos = tc.get("eos_token")
    eos = eos.get("content") if isinstance(eos, dict) else eos
    return max(ids.values()) + 1, ids.get(eos, 0)


def write_padded_tokenizer(src: str, dst: str, vocab_size: int) -> None:
    """Copies tokenizer.json, its BPE vocabulary filled up to vocab_size with tokens no merge produces.

    The engine refuses a tokenizer far smaller than the logits (another model's), so a small tokenizer on a
    151,936-row shape gets `<unused_N>` entries for the ids above its own: text encodes exactly as before, the
    model's random picks among those ids decode to visible text, and the sampler sees the real shape's vocabulary.
    """
    tj = json.load(open(src))
    vocab = tj["model"]["vocab"]
    taken = set(vocab.values()) | {t["id"] for t in tj.get("added_tokens", [])}
    if max(taken) + 1 >= vocab_size:
        shutil.copyfile(src, dst)
        return
    for i in range(max(taken) + 1, vocab_size):
        name = f"<unused_{i}>"
        assert name not in vocab, name
        vocab[name] = i
    with open(dst, "w") as f:
        json.dump(tj, f, ensure_ascii=False)


def shape_fields(shape: str, layers: int | None) -> tuple[dict, dict]:
    fields, extra = SHAPES[shape]
    fields = dict(fields)
    extra = dict(extra)
    if layers:
        fields["num_hidden_layers"] = layers
        if "max_window_layers" in extra:
            extra["max_window_layers"] = layers
    return fields, extra


def hf_config(fields: dict, extra: dict, eos: int) -> dict:
    """config.json as the real checkpoint spells it."""
    qwen2 = extra.get("model_type") == "qwen2"
    cfg = {
        "architectures": extra.get("architectures", ["LlamaForCausalLM"]),
        "attention_dropout": 0.0,
        "bos_token_id": eos,
        "eos_token_id": eos,
        "hidden_act": "silu",
        "hidden_size": fields["hidden_size"],
        "initializer_range": 0.02,
        "intermediate_size": fields["intermediate_size"],
        "max_position_embeddings": fields["max_position_embeddings"],
        "model_type": extra.get("model_type", "llama"),
        "num_attention_heads": fields["num_attention_heads"],
        "num_hidden_layers": fields["num_hidden_layers"],
        "num_key_value_heads": fields["num_key_value_heads"],
        "rms_norm_eps": fields["rms_norm_eps"],
        "rope_scaling": None,
        "rope_theta": fields["rope_theta"],
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.45.2",
        "use_cache": True,
        "vocab_size": fields["vocab_size"],
    }
    if qwen2:  # Qwen2 has q/k/v biases by definition and derives head_dim from hidden_size / heads
        assert fields["head_dim"] * fields["num_attention_heads"] == fields["hidden_size"]
        for k in ("max_window_layers", "sliding_window", "use_sliding_window"):
            cfg[k] = extra[k]
    else:
        cfg.update(head_dim=fields["head_dim"], attention_bias=fields["attention_bias"], mlp_bias=False,
                   pretraining_tp=1)
    return dict(sorted(cfg.items()))


def tensor_specs(fields: dict) -> list[tuple[str, list[int], str]]:
    """(HF name, shape, init kind) in the checkpoint's (sorted) order."""
    h, i_, v = fields["hidden_size"], fields["intermediate_size"], fields["vocab_size"]
    q, kv = fields["num_attention_heads"] * fields["head_dim"], fields["num_key_value_heads"] * fields["head_dim"]
    specs = [("model.embed_tokens.weight", [v, h], "embed"), ("model.norm.weight", [h], "norm")]
    for n in range(fields["num_hidden_layers"]):
        p = f"model.layers.{n}."
        specs += [(p + "input_layernorm.weight", [h], "norm"), (p + "post_attention_layernorm.weight", [h], "norm"),
                  (p + "self_attn.q_proj.weight", [q, h], "linear"), (p + "self_attn.k_proj.weight", [kv, h], "linear"),
                  (p + "self_attn.v_proj.weight", [kv, h], "linear"), (p + "self_attn.o_proj.weight", [h, q], "out"),
                  (p + "mlp.gate_proj.weight", [i_, h], "linear"), (p + "mlp.up_proj.weight", [i_, h], "linear"),
                  (p + "mlp.down_proj.weight", [h, i_], "out")]
        if fields["attention_bias"]:
            specs += [(p + "self_attn.q_proj.bias", [q], "bias"), (p + "self_attn.k_proj.bias", [kv], "bias"),
                      (p + "self_attn.v_proj.bias", [kv], "bias")]
    return sorted(specs)


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns (uint16), round to nearest even (finite inputs)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


CHUNK = 1 << 24  # values per piece: bounds memory (the 0.5B shape's embedding alone is 136M values)


def random_chunks(shape: list[int], kind: str, std: float, layers: int, rng: np.random.Generator):
    """The tensor's values in order, in pieces (the same stream as one draw: numpy's Generator keeps no cache)."""
    n = int(np.prod(shape))
    s = np.float32(0.02 if kind == "norm" else std / np.sqrt(2 * layers) if kind == "out" else std)
    for i in range(0, n, CHUNK):
        out = rng.standard_normal(min(CHUNK, n - i), dtype=np.float32)
        out *= s
        if kind == "norm":
            out += np.float32(1)
        yield out


def write_checkpoint(out: str, shape: str, layers: int | None = None, seed: int = 0, std: float = 0.02,
                     tokenizer: str | None = None) -> dict:
    t0 = time.time()
    tok_dir = tokenizer or default_tokenizer_dir()
    tok_vocab, eos = tokenizer_info(tok_dir)
    fields, extra = shape_fields(shape, layers)
    if tok_vocab > fields["vocab_size"]:
        raise SystemExit(f"tokenizer has {tok_vocab} tokens, more than the shape's vocab {fields['vocab_size']}")
    specs = tensor_specs(fields)
    work = out.rstrip("/") + ".partial"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    entries = [(name, "BF16", shp, 2 * int(np.prod(shp))) for name, shp, _ in specs]
    meta = {"format": "pt", "ghostline": f"random weights, shape {shape}, seed {seed}, std {std}"}
    index = {n: i for i, n in enumerate(sorted(s[0] for s in specs))}
    with open(os.path.join(work, "model.safetensors"), "wb") as f:
        f.write(encode_header(entries, meta))
        for name, shp, kind in specs:  # written as they are drawn: the 0.5B shape is ~1 GB
            rng = np.random.default_rng([seed, index[name]])
            for piece in random_chunks(shp, kind, std, fields["num_hidden_layers"], rng):
                f.write(to_bf16_bits(piece).tobytes())
    cfg = hf_config(fields, extra, eos)
    cfg["_comment"] = (f"random weights (seed {seed}, std {std}) with the shape {shape}: for benchmarks only; "
                       f"tokenizer from {os.path.relpath(tok_dir, REPO)}")
    with open(os.path.join(work, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(work, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": eos, "eos_token_id": eos, "do_sample": False, "max_new_tokens": 64}, f, indent=2)
    shutil.copyfile(os.path.join(tok_dir, "tokenizer_config.json"), os.path.join(work, "tokenizer_config.json"))
    write_padded_tokenizer(os.path.join(tok_dir, "tokenizer.json"), os.path.join(work, "tokenizer.json"),
                           fields["vocab_size"])
    shutil.rmtree(out, ignore_errors=True)
    os.replace(work, out)
    params = sum(int(np.prod(s[1])) for s in specs)
    return {"out": out, "shape": shape, "layers": fields["num_hidden_layers"], "params": params, "seed": seed,
            "std": std, "bytes": sum(e[3] for e in entries), "seconds": round(time.time() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="checkpoint folder to write (replaced)")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="qwen2.5-coder-0.5b")
    ap.add_argument("--layers", type=int, help="override the number of layers (quick tests)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--std", type=float, default=0.02)
    ap.add_argument("--tokenizer", help="folder with tokenizer.json + tokenizer_config.json")
    a = ap.parse_args()
    print(json.dumps(write_checkpoint(a.out, a.shape, a.layers, a.seed, a.std, a.tokenizer)))


if __name__ == "__main__":
    main()
