"""Export a Llama-architecture model folder (config.json, model.safetensors, tokenizer.json) to GGUF (v3, F32),
so llama.cpp runs exactly the same weights as Ghostline's ONNX export (the benchmark's reference).

GGUF layout (ggml's docs/gguf.md): magic "GGUF", u32 version, u64 tensor count, u64 metadata count, the
metadata key/values, the tensor infos (name, dims innermost-first, type, offset), padding to the alignment,
then the tensor data. llama.cpp's rotary embedding pairs adjacent dimensions while Hugging Face's
rotate_half pairs the two halves, so q/k rows are permuted as llama.cpp's own converter does.

usage: python3 export_gguf.py MODEL_DIR OUT.gguf [--safetensors FILE] [--q8_0]
  --safetensors: default MODEL_DIR/model.safetensors; --q8_0: 8-bit weights (llama.cpp's Q8_0), as Ghostline ships int8
"""
from __future__ import annotations

import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ALIGN = 32
T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY, T_UINT64 = 4, 5, 6, 7, 8, 9, 10
GGML_F32 = 0
GGML_Q8_0 = 8  # blocks of 32 weights: an fp16 scale, then 32 int8 (ggml-common.h block_q8_0)


def read_safetensors(path: str) -> dict:
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        if info["dtype"] == "BF16":  # the top half of a float32
            raw = np.frombuffer(data[a:b], dtype="<u2").astype(np.uint32) << 16
            out[name] = raw.view(np.float32).reshape(info["shape"])
            continue
        dt = {"F32": np.float32, "F16": np.float16}[info["dtype"]]
        out[name] = np.frombuffer(data[a:b], dtype=dt).reshape(info["shape"]).astype(np.float32)
    return out


def permute_rope(w: np.ndarray, n_head: int) -> np.ndarray:
    """HF rotate_half layout -> llama.cpp's interleaved pairs (convert_hf_to_gguf's LlamaModel.permute)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


class Writer:
    def __init__(self, q8: bool = False) -> None:
        self.kv: list[bytes] = []
        self.tensors: list[tuple[str, np.ndarray]] = []
        self.q8 = q8

    @staticmethod
    def _str(s: str) -> bytes:
        b = s.encode("utf-8")
        return struct.pack("<Q", len(b)) + b

    def add(self, key: str, vtype: int, value) -> None:
        body = self._str(key) + struct.pack("<I", vtype)
        if vtype == T_STRING:
            body += self._str(value)
        elif vtype == T_UINT32:
            body += struct.pack("<I", value)
        elif vtype == T_INT32:
            body += struct.pack("<i", value)
        elif vtype == T_FLOAT32:
            body += struct.pack("<f", value)
        elif vtype == T_BOOL:
            body += struct.pack("<?", value)
        elif vtype == T_UINT64:
            body += struct.pack("<Q", value)
        else:
            raise ValueError(vtype)
        self.kv.append(body)

    def add_array(self, key: str, etype: int, values) -> None:
        body = self._str(key) + struct.pack("<I", T_ARRAY) + struct.pack("<IQ", etype, len(values))
        if etype == T_STRING:
            body += b"".join(self._str(v) for v in values)
        elif etype == T_INT32:
            body += np.asarray(values, dtype="<i4").tobytes()
        else:
            raise ValueError(etype)
        self.kv.append(body)

    def tensor(self, name: str, a: np.ndarray) -> None:
        self.tensors.append((name, np.ascontiguousarray(a, dtype="<f4")))

    @staticmethod
    def _q8_0(a: np.ndarray) -> bytes:
        blocks = a.reshape(-1, 32)
        d = np.abs(blocks).max(axis=1) / 127.0
        q = np.round(blocks / np.where(d == 0, 1, d)[:, None]).clip(-127, 127).astype(np.int8)
        out = np.zeros(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", 32)])
        out["d"] = d.astype(np.float16)
        out["qs"] = q
        return out.tobytes()

    def write(self, path: str) -> None:
        infos = b""
        offset = 0
        blobs = []
        for name, a in self.tensors:
            dims = list(reversed(a.shape))  # ggml: innermost dimension first
            quantize = self.q8 and a.ndim == 2 and a.shape[1] % 32 == 0
            blob = self._q8_0(a) if quantize else a.tobytes()
            infos += self._str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
            infos += struct.pack("<IQ", GGML_Q8_0 if quantize else GGML_F32, offset)
            offset += (len(blob) + ALIGN - 1) // ALIGN * ALIGN
            blobs.append(blob)
        head = b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)) + b"".join(self.kv) + infos
        with open(path, "wb") as f:
            f.write(head)
            f.write(b"\0" * ((-len(head)) % ALIGN))
            for blob in blobs:
                f.write(blob)
                f.write(b"\0" * ((-len(blob)) % ALIGN))


def export(model_dir: str, out: str, safetensors: str | None = None, q8: bool = False) -> None:
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    if cfg.get("model_type") != "llama":
        raise SystemExit(f"only llama-architecture models are supported, not {cfg.get('model_type')}")
    tok = json.load(open(os.path.join(model_dir, "tokenizer.json")))
    gen = {}
    if os.path.exists(os.path.join(model_dir, "generation_config.json")):
        gen = json.load(open(os.path.join(model_dir, "generation_config.json")))
    sd = read_safetensors(safetensors or os.path.join(model_dir, "model.safetensors"))
    n_layer, n_head, n_kv = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // n_head

    w = Writer(q8)
    w.add("general.architecture", T_STRING, "llama")
    w.add("general.name", T_STRING, os.path.basename(os.path.normpath(model_dir)))
    w.add("general.alignment", T_UINT32, ALIGN)
    w.add("general.file_type", T_UINT32, 7 if q8 else 0)  # LLAMA_FTYPE_MOSTLY_Q8_0 / ALL_F32
    w.add("llama.context_length", T_UINT32, cfg["max_position_embeddings"])
    w.add("llama.embedding_length", T_UINT32, cfg["hidden_size"])
    w.add("llama.block_count", T_UINT32, n_layer)
    w.add("llama.feed_forward_length", T_UINT32, cfg["intermediate_size"])
    w.add("llama.rope.dimension_count", T_UINT32, head_dim)
    w.add("llama.attention.head_count", T_UINT32, n_head)
    w.add("llama.attention.head_count_kv", T_UINT32, n_kv)
    w.add("llama.attention.key_length", T_UINT32, head_dim)
    w.add("llama.attention.value_length", T_UINT32, head_dim)
    w.add("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, cfg.get("rms_norm_eps", 1e-5))
    w.add("llama.rope.freq_base", T_FLOAT32, cfg.get("rope_theta", 10000.0))
    w.add("llama.vocab_size", T_UINT32, cfg["vocab_size"])

    # Tokenizer: byte-level BPE ("gpt2" in llama.cpp), ids in order, added tokens as control tokens.
    vocab = dict(tok["model"]["vocab"])
    special = set()
    for t in tok.get("added_tokens", []):
        vocab[t["content"]] = t["id"]
        if t.get("special"):
            special.add(t["id"])
    size = cfg["vocab_size"]
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [5] * size  # unused
    for text, i in vocab.items():
        if i < size:
            tokens[i] = text
            types[i] = 3 if i in special else 1
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"].get("merges", [])]
    eos = gen.get("eos_token_id", cfg.get("eos_token_id", 0))
    eos = eos[0] if isinstance(eos, list) else eos
    w.add("tokenizer.ggml.model", T_STRING, "gpt2")
    w.add("tokenizer.ggml.pre", T_STRING, "default")
    w.add_array("tokenizer.ggml.tokens", T_STRING, tokens)
    w.add_array("tokenizer.ggml.token_type", T_INT32, types)
    w.add_array("tokenizer.ggml.merges", T_STRING, merges)
    w.add("tokenizer.ggml.eos_token_id", T_UINT32, eos)
    w.add("tokenizer.ggml.bos_token_id", T_UINT32, eos)
    w.add("tokenizer.ggml.add_bos_token", T_BOOL, False)

    w.tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    w.tensor("output_norm.weight", sd["model.norm.weight"])
    if "lm_head.weight" in sd and not cfg.get("tie_word_embeddings", False):
        w.tensor("output.weight", sd["lm_head.weight"])
    names = {
        "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
        "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
    }
    for i in range(n_layer):
        for gg, hf in names.items():
            t = sd[f"model.layers.{i}.{hf}.weight"]
            if gg == "attn_q":
                t = permute_rope(t, n_head)
            elif gg == "attn_k":
                t = permute_rope(t, n_kv)
            w.tensor(f"blk.{i}.{gg}.weight", t)
    w.write(out)
    print(f"wrote {out}: {os.path.getsize(out)} bytes, {len(w.tensors)} tensors")


if __name__ == "__main__":
    args = sys.argv[1:]
    st = None
    q8 = "--q8_0" in args
    if q8:
        args.remove("--q8_0")
    if "--safetensors" in args:
        i = args.index("--safetensors")
        st = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2:
        raise SystemExit(__doc__)
    export(args[0], args[1], st, q8)
