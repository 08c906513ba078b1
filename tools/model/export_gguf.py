"""Export a Hugging Face checkpoint folder (config.json, model.safetensors or a sharded set with its index,
tokenizer.json) of the llama, qwen2 or starcoder2 architecture to GGUF v3, so llama.cpp runs exactly the same weights as
Ghostline (the benchmark's reference). numpy only; tensors are read through memory maps and written one at a
time (a few row chunks in memory), so a 0.5B checkpoint exports in bounded memory.

GGUF layout (ggml's docs/gguf.md): magic "GGUF", u32 version, u64 tensor count, u64 metadata count, the
metadata key/values, the tensor infos (name, dims innermost-first, type, offset), padding to the alignment,
then the tensor data.

Architectures (llama.cpp's convert_hf_to_gguf.py / conversion/, src/models/*.cpp):
- llama: llama.cpp's rotary embedding (LLAMA_ROPE_TYPE_NORM) pairs adjacent dimensions while Hugging Face's
  rotate_half pairs the two halves, so q/k rows are permuted as llama.cpp's LlamaModel.permute does;
- qwen2: rotary of the NEOX type (the halves, as Hugging Face), so no permutation; q/k/v biases as
  blk.N.attn_{q,k,v}.bias (F32); tied embeddings: no output.weight (llama.cpp uses token_embd for the output);
- starcoder2: NEOX rotary too; LayerNorm with biases ({arch}.attention.layer_norm_epsilon), biases on every linear,
  mlp.c_fc / mlp.c_proj as ffn_up / ffn_down (llama.cpp's tensor_mapping.py); test/converter/ggufFixtures.llama.test.ts
  checks llama-server decodes each fixture as PyTorch does.

Weight formats (2-D weights whose rows are a multiple of 32; norms and biases stay F32):
- F32 (default);
- --q8_0: ggml's Q8_0 (quantize_row_q8_0_ref: d = amax / 127, code = roundf(x * (1/d)), float32 arithmetic,
  d stored as fp16);
- --q4_0: ggml's Q4_0 (quantize_row_q4_0_ref): per block of 32 along the input dimension of a row of the HF
  weight [out, in], max = the value of largest |x| (first one, with its sign), d = max / -8, id = d ? 1/d : 0,
  code = min(15, trunc(x * id + 8.5)), all float32, d stored as fp16. These are the same codes Ghostline's
  converter writes (src/converter/quantize.ts), so speeds compare like for like; only the packing differs
  (ggml: low nibbles = codes 0..15 of the block, high nibbles = 16..31; MatMulNBits: consecutive pairs).
  The token embedding (and so the tied output) is Q4_0 too.

usage: /usr/bin/python3 -m tools.model.export_gguf MODEL_DIR OUT.gguf [--safetensors FILE] [--q8_0 | --q4_0]
  --safetensors: default MODEL_DIR/model.safetensors (or the index of a sharded set)
       /usr/bin/python3 -m tools.model.export_gguf --compare-codes OUT.gguf CONVERTED/onnx/model_q4.onnx
  checks that a qwen2 Q4_0 GGUF and `ghostline convert --quant q4`'s graph carry the same codes and scales
"""
from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys

import numpy as np

from .safetensors_io import SafeTensors

ALIGN = 32
T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY, T_UINT64 = 4, 5, 6, 7, 8, 9, 10
GGML_F32 = 0
GGML_Q4_0 = 2  # blocks of 32 weights: an fp16 scale, then 16 bytes of 4-bit codes (ggml-common.h block_q4_0)
GGML_Q8_0 = 8  # blocks of 32 weights: an fp16 scale, then 32 int8 (ggml-common.h block_q8_0)
BLOCK_BYTES = {GGML_Q4_0: 18, GGML_Q8_0: 34}
FILE_TYPE = {GGML_F32: 0, GGML_Q4_0: 2, GGML_Q8_0: 7}  # LLAMA_FTYPE_ALL_F32 / MOSTLY_Q4_0 / MOSTLY_Q8_0
ROWS_PER_CHUNK_FLOATS = 1 << 22  # ~4M floats per chunk of rows


def permute_rope(w: np.ndarray, n_head: int) -> np.ndarray:
    """HF rotate_half layout -> llama.cpp's interleaved pairs (convert_hf_to_gguf's LlamaModel.permute)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def quantize_q4_0(a: np.ndarray) -> bytes:
    """ggml's quantize_row_q4_0_ref over rows of `a` (row length a multiple of 32), vectorised, float32 math."""
    blocks = np.ascontiguousarray(a, dtype=np.float32).reshape(-1, 32)
    idx = np.abs(blocks).argmax(axis=1)  # first of the largest |x|, as ggml's strict `amax < fabsf(v)` picks
    mx = blocks[np.arange(len(blocks)), idx]
    d = (mx / np.float32(-8)).astype(np.float32)
    inv = np.zeros_like(d)
    np.divide(np.float32(1), d, out=inv, where=d != 0)
    x = blocks * inv[:, None]  # float32
    x += np.float32(8.5)
    q = np.minimum(15, x.astype(np.int32)).astype(np.uint8)  # (int8_t) cast: truncation (x >= 0 here)
    out = np.zeros(len(blocks), dtype=[("d", "<f2"), ("qs", "u1", 16)])
    out["d"] = d.astype(np.float16)
    out["qs"] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


def quantize_q8_0(a: np.ndarray) -> bytes:
    """ggml's quantize_row_q8_0_ref, vectorised: float32 math, roundf (half away from zero)."""
    blocks = np.ascontiguousarray(a, dtype=np.float32).reshape(-1, 32)
    d = (np.abs(blocks).max(axis=1) / np.float32(127)).astype(np.float32)
    inv = np.zeros_like(d)
    np.divide(np.float32(1), d, out=inv, where=d != 0)
    x = blocks * inv[:, None]
    q = (np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))).astype(np.int8)
    out = np.zeros(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", 32)])
    out["d"] = d.astype(np.float16)
    out["qs"] = q
    return out.tobytes()


class Writer:
    def __init__(self, weight_type: int = GGML_F32) -> None:
        self.kv: list[bytes] = []
        # name, HF shape (outermost first), ggml type, chunks: a function yielding float32 row chunks
        self.tensors: list[tuple[str, list[int], int, object]] = []
        self.weight_type = weight_type

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

    def tensor(self, name: str, shape: list[int], chunks) -> None:
        """`chunks()` yields float32 arrays of whole rows, in order. 2-D weights get the writer's weight type."""
        ggml_type = self.weight_type if len(shape) == 2 and shape[1] % 32 == 0 else GGML_F32
        self.tensors.append((name, list(shape), ggml_type, chunks))

    @staticmethod
    def nbytes(shape: list[int], ggml_type: int) -> int:
        n = int(np.prod(shape))
        return 4 * n if ggml_type == GGML_F32 else n // 32 * BLOCK_BYTES[ggml_type]

    def write(self, path: str) -> None:
        infos = b""
        offset = 0
        for name, shape, ggml_type, _ in self.tensors:
            dims = list(reversed(shape))  # ggml: innermost dimension first
            infos += self._str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
            infos += struct.pack("<IQ", ggml_type, offset)
            offset += (self.nbytes(shape, ggml_type) + ALIGN - 1) // ALIGN * ALIGN
        head = b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)) + b"".join(self.kv) + infos
        tmp = path + ".partial"
        with open(tmp, "wb") as f:
            f.write(head)
            f.write(b"\0" * ((-len(head)) % ALIGN))
            for name, shape, ggml_type, chunks in self.tensors:
                written = 0
                for c in chunks():
                    c = np.ascontiguousarray(c, dtype="<f4")
                    blob = c.tobytes() if ggml_type == GGML_F32 else (quantize_q4_0(c) if ggml_type == GGML_Q4_0 else quantize_q8_0(c))
                    f.write(blob)
                    written += len(blob)
                if written != self.nbytes(shape, ggml_type):
                    raise SystemExit(f"{name}: wrote {written} bytes, expected {self.nbytes(shape, ggml_type)}")
                f.write(b"\0" * ((-written) % ALIGN))
        os.replace(tmp, path)


def row_chunks(st: SafeTensors, name: str, transform=None):
    """A chunks() function over a checkpoint tensor (whole tensor at once when it needs a transform)."""
    shape = st.shape(name)

    def gen():
        if transform is not None:
            yield transform(st.all(name))
            return
        row = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        step = max(1, ROWS_PER_CHUNK_FLOATS // row) if len(shape) > 1 else shape[0]
        for r0 in range(0, shape[0], step):
            yield st.rows(name, r0, min(shape[0], r0 + step))
    return gen


def read_gguf(path: str) -> tuple[dict, dict]:
    """(metadata {key: value}, tensors {name: (HF-order shape, ggml type, raw bytes)}) of a GGUF v3 file."""
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    pos = 0

    def take(fmt: str):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, mm, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string() -> str:
        nonlocal pos
        n = take("Q")
        s = bytes(mm[pos:pos + n]).decode("utf-8")
        pos += n
        return s

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", T_UINT32: "I", T_INT32: "i", T_FLOAT32: "f", T_BOOL: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t: int):
        if t == T_STRING:
            return string()
        if t == T_ARRAY:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    if bytes(mm[:4]) != b"GGUF":
        raise SystemExit(f"{path}: not a GGUF file")
    pos = 4
    take("I")  # version
    n_tensors, n_kv = take("Q"), take("Q")
    meta = {}
    for _ in range(n_kv):
        k = string()
        meta[k] = value(take("I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        infos.append((name, list(reversed(dims)), take("I"), take("Q")))
    align = meta.get("general.alignment", ALIGN)
    base = (pos + align - 1) // align * align
    tensors = {}
    for name, shape, t, off in infos:
        tensors[name] = (shape, t, mm[base + off: base + off + Writer.nbytes(shape, t)])
    return meta, tensors


def compare_q4_codes(gguf: str, onnx_file: str) -> dict:
    """Checks that a Q4_0 GGUF and Ghostline's converted q4 graph (`ghostline convert --quant q4`, block 32)
    carry the same 4-bit codes and the same fp16 scales (the graph folds 1/sqrt(head_dim) into the query
    rows' scales). Needs the onnx package. Returns counts; raises SystemExit on any difference."""
    import onnx

    meta, tensors = read_gguf(gguf)
    arch = meta["general.architecture"]
    head_dim = meta[f"{arch}.attention.key_length"]
    m = onnx.load(onnx_file, load_external_data=False)
    folder = os.path.dirname(os.path.abspath(onnx_file))

    def initializer(name: str) -> np.ndarray | None:
        for t in m.graph.initializer:
            if t.name == name:
                ext = {e.key: e.value for e in t.external_data}
                raw = np.memmap(os.path.join(folder, ext["location"]), dtype=np.uint8, mode="r",
                                offset=int(ext.get("offset", 0)), shape=(int(ext["length"]),)) if ext else np.frombuffer(t.raw_data, np.uint8)
                dt = {1: np.float32, 2: np.uint8}[t.data_type]
                return raw.view(dt).reshape(list(t.dims))
        return None

    def gguf_q4(name: str) -> tuple[np.ndarray, np.ndarray]:
        shape, t, raw = tensors[name]
        if t != GGML_Q4_0:
            raise SystemExit(f"{gguf}: {name} is not Q4_0 (type {t})")
        n = int(np.prod(shape))
        b = np.frombuffer(raw, dtype=[("d", "<f2"), ("qs", "u1", 16)], count=n // 32)
        codes = np.concatenate([b["qs"] & 15, b["qs"] >> 4], axis=1).reshape(shape[0], -1)
        return codes, b["d"].astype(np.float32).reshape(shape[0], -1)

    def onnx_q4(prefix: str) -> tuple[np.ndarray, np.ndarray]:
        q = initializer(prefix + ".qweight")
        s = initializer(prefix + ".scales")
        if q is None or s is None:
            raise SystemExit(f"{onnx_file}: no initializer {prefix}.qweight / .scales")
        codes = np.stack([q & 15, q >> 4], axis=-1).reshape(q.shape[0], -1)  # MatMulNBits: low nibble = even index
        return codes, s.reshape(q.shape[0], -1)

    pairs = [("lm_head", ["token_embd.weight"] if "output.weight" not in tensors else ["output.weight"], [1.0])]
    for i in range(meta[f"{arch}.block_count"]):
        p = f"model.layers.{i}."
        pairs += [(p + "self_attn.qkv_proj", [f"blk.{i}.attn_q.weight", f"blk.{i}.attn_k.weight", f"blk.{i}.attn_v.weight"],
                   [1 / math.sqrt(head_dim), 1.0, 1.0]),
                  (p + "self_attn.o_proj", [f"blk.{i}.attn_output.weight"], [1.0]),
                  (p + "mlp.gate_up_proj", [f"blk.{i}.ffn_gate.weight", f"blk.{i}.ffn_up.weight"], [1.0, 1.0]),
                  (p + "mlp.down_proj", [f"blk.{i}.ffn_down.weight"], [1.0])]
    if arch == "llama":
        raise SystemExit("compare_q4_codes: llama GGUFs have rope-permuted q/k rows; compare qwen2 checkpoints")
    weights = 0
    for prefix, names, row_scales in pairs:
        oc, os_ = onnx_q4(prefix)
        parts = [gguf_q4(n) for n in names]
        gc = np.concatenate([c for c, _ in parts])
        # the converter's f32(fp16(d) * rowScale), the product in double
        gs = np.concatenate([(d.astype(np.float64) * r).astype(np.float32) for (_, d), r in zip(parts, row_scales)])
        if oc.shape != gc.shape:
            raise SystemExit(f"{prefix}: ONNX codes {oc.shape} vs GGUF {gc.shape}")
        bad = int((oc != gc).sum())
        bad_scales = int((os_ != gs).sum())
        if bad or bad_scales:
            raise SystemExit(f"{prefix}: {bad} of {oc.size} codes and {bad_scales} of {os_.size} scales differ")
        weights += oc.size
    emb = initializer("model.embed_tokens.gather_codes")
    if emb is not None:  # GatherBlockQuantized's table: the same bytes as the tied lm_head's
        gc, _ = gguf_q4("token_embd.weight")
        ec = np.stack([emb & 15, emb >> 4], axis=-1).reshape(emb.shape[0], -1)
        if (ec != gc).any():
            raise SystemExit(f"embedding: {int((ec != gc).sum())} codes differ")
    out = {"tensors_compared": len(pairs), "weights_compared": weights, "codes_equal": True, "scales_equal": True}
    print(json.dumps(out))
    return out


# llama.cpp's pre-tokenizers are presets compiled into src/llama-vocab.cpp (tokenizer.ggml.pre names one); a
# GGUF cannot carry a regex. The tokenizer.json regexes of the presets we can name, as Hugging Face writes them.
PRESET_REGEXES = {
    "qwen2": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    "llama-bpe": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
}

# DeepSeek-Coder's tokenizer.json: four Split steps, then digits one by one, then ByteLevel without its regex.
DEEPSEEK_CODER_SPLITS = ["[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"]


def pre_tokenizer(tok: dict) -> tuple[str, str | None]:
    """llama.cpp's preset for the tokenizer's pre-tokenizer, and the regex no preset matches (None when one does)."""
    pre = tok.get("pre_tokenizer") or {}
    parts = pre.get("pretokenizers", [pre]) if pre.get("type") == "Sequence" else [pre]
    regexes = [p["pattern"]["Regex"] for p in parts if p.get("type") == "Split" and "Regex" in p.get("pattern", {})]
    digits = any(p.get("type") == "Digits" and p.get("individual_digits") for p in parts)
    if not regexes and any(p.get("type") == "ByteLevel" and p.get("use_regex", True) for p in parts):
        # GPT-2's own regex inside ByteLevel; StarCoder's and SmolLM's split digits one by one first
        return ("smollm" if digits else "gpt-2"), None
    if regexes == DEEPSEEK_CODER_SPLITS and digits:
        return "deepseek-coder", None
    if len(regexes) == 1:
        for name, regex in PRESET_REGEXES.items():
            if regexes[0] == regex:
                return name, None
    return "default", " + ".join(regexes) or json.dumps(pre)[:200]


def export(model_dir: str, out: str, safetensors: str | None = None, q8: bool = False, q4: bool = False) -> dict:
    if q8 and q4:
        raise SystemExit("--q8_0 and --q4_0 exclude each other")
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    arch = cfg.get("model_type")
    if arch not in ("llama", "qwen2", "starcoder2"):
        raise SystemExit(f"only llama, qwen2 and starcoder2 models are supported, not {arch}")
    starcoder = arch == "starcoder2"
    tok = json.load(open(os.path.join(model_dir, "tokenizer.json")))
    gen = {}
    if os.path.exists(os.path.join(model_dir, "generation_config.json")):
        gen = json.load(open(os.path.join(model_dir, "generation_config.json")))
    if safetensors is None:
        safetensors = os.path.join(model_dir, "model.safetensors")
        if not os.path.exists(safetensors) and os.path.exists(safetensors + ".index.json"):
            safetensors += ".index.json"
    st = SafeTensors(safetensors)
    n_layer, n_head = cfg["num_hidden_layers"], cfg["num_attention_heads"]
    n_kv = cfg.get("num_key_value_heads", n_head)
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // n_head
    weight_type = GGML_Q4_0 if q4 else GGML_Q8_0 if q8 else GGML_F32

    w = Writer(weight_type)
    w.add("general.architecture", T_STRING, arch)
    w.add("general.name", T_STRING, os.path.basename(os.path.normpath(model_dir)))
    w.add("general.alignment", T_UINT32, ALIGN)
    w.add("general.file_type", T_UINT32, FILE_TYPE[weight_type])
    w.add(f"{arch}.context_length", T_UINT32, cfg["max_position_embeddings"])
    w.add(f"{arch}.embedding_length", T_UINT32, cfg["hidden_size"])
    w.add(f"{arch}.block_count", T_UINT32, n_layer)
    w.add(f"{arch}.feed_forward_length", T_UINT32, cfg["intermediate_size"])
    w.add(f"{arch}.rope.dimension_count", T_UINT32, head_dim)
    w.add(f"{arch}.attention.head_count", T_UINT32, n_head)
    w.add(f"{arch}.attention.head_count_kv", T_UINT32, n_kv)
    w.add(f"{arch}.attention.key_length", T_UINT32, head_dim)
    w.add(f"{arch}.attention.value_length", T_UINT32, head_dim)
    if starcoder:  # LayerNorm (with bias): llama.cpp's LLM_KV_ATTENTION_LAYERNORM_EPS
        w.add(f"{arch}.attention.layer_norm_epsilon", T_FLOAT32, cfg.get("norm_epsilon", 1e-5))
    else:
        w.add(f"{arch}.attention.layer_norm_rms_epsilon", T_FLOAT32, cfg.get("rms_norm_eps", 1e-6 if arch == "qwen2" else 1e-5))
    w.add(f"{arch}.rope.freq_base", T_FLOAT32, cfg.get("rope_theta", 1000000.0 if arch == "qwen2" else 10000.0))
    w.add(f"{arch}.vocab_size", T_UINT32, cfg["vocab_size"])
    rs = cfg.get("rope_scaling")
    if rs:
        kind = rs.get("rope_type", rs.get("type"))
        if kind == "linear":  # llama.cpp: positions divided by the factor, as transformers' linear scaling
            w.add(f"{arch}.rope.scaling.type", T_STRING, "linear")
            w.add(f"{arch}.rope.scaling.factor", T_FLOAT32, float(rs["factor"]))
        elif kind != "default":
            raise SystemExit(f"rope_scaling {rs} is not exported (linear only)")

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
    tok_cfg_path = os.path.join(model_dir, "tokenizer_config.json")
    tok_cfg = json.load(open(tok_cfg_path)) if os.path.exists(tok_cfg_path) else {}
    bos_token = tok_cfg.get("bos_token")
    bos_text = bos_token.get("content") if isinstance(bos_token, dict) else bos_token
    bos = vocab.get(bos_text, eos) if bos_text else eos
    add_bos = bool(tok_cfg.get("add_bos_token", False)) and bos_text in vocab
    w.add("tokenizer.ggml.model", T_STRING, "gpt2")
    preset, unmatched = pre_tokenizer(tok)
    w.add("tokenizer.ggml.pre", T_STRING, preset)
    w.add_array("tokenizer.ggml.tokens", T_STRING, tokens)
    w.add_array("tokenizer.ggml.token_type", T_INT32, types)
    w.add_array("tokenizer.ggml.merges", T_STRING, merges)
    w.add("tokenizer.ggml.eos_token_id", T_UINT32, eos)
    w.add("tokenizer.ggml.bos_token_id", T_UINT32, bos)
    w.add("tokenizer.ggml.add_bos_token", T_BOOL, add_bos)

    def add(gg: str, hf: str, transform=None) -> None:
        if hf not in st:
            raise SystemExit(f"{safetensors}: missing tensor {hf}")
        w.tensor(gg, st.shape(hf), row_chunks(st, hf, transform))

    add("token_embd.weight", "model.embed_tokens.weight")
    add("output_norm.weight", "model.norm.weight")
    if starcoder:
        add("output_norm.bias", "model.norm.bias")
    if "lm_head.weight" in st and not cfg.get("tie_word_embeddings", False):
        add("output.weight", "lm_head.weight")  # else tied: llama.cpp reads token_embd for the output
    names = {
        "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
        "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
    }
    if starcoder:  # c_fc -> gelu(tanh) -> c_proj, no gate; llama.cpp's tensor_mapping.py names them ffn_up / ffn_down
        names = {k: v for k, v in names.items() if k != "ffn_gate"} | {"ffn_up": "mlp.c_fc", "ffn_down": "mlp.c_proj"}
    permute = arch == "llama"  # qwen2 and starcoder2 are NEOX rotary: Hugging Face's layout as it is
    q_bias = arch == "qwen2" or cfg.get("attention_bias", False) or (starcoder and cfg.get("use_bias", True))
    for i in range(n_layer):
        for gg, hf in names.items():
            transform = None
            if permute and gg == "attn_q":
                transform = lambda t: permute_rope(t, n_head)  # noqa: E731
            elif permute and gg == "attn_k":
                transform = lambda t: permute_rope(t, n_kv)  # noqa: E731
            add(f"blk.{i}.{gg}.weight", f"model.layers.{i}.{hf}.weight", transform)
            if q_bias and gg in ("attn_q", "attn_k", "attn_v"):
                add(f"blk.{i}.{gg}.bias", f"model.layers.{i}.{hf}.bias", transform)
            if cfg.get("attention_bias", False) and gg == "attn_output" and f"model.layers.{i}.{hf}.bias" in st:
                add(f"blk.{i}.{gg}.bias", f"model.layers.{i}.{hf}.bias")
            if starcoder and gg not in ("attn_q", "attn_k", "attn_v") and f"model.layers.{i}.{hf}.bias" in st:
                add(f"blk.{i}.{gg}.bias", f"model.layers.{i}.{hf}.bias")  # norms, o_proj, c_fc, c_proj
    w.write(out)
    info = {"out": out, "bytes": os.path.getsize(out), "tensors": len(w.tensors), "architecture": arch,
            "weights": {GGML_F32: "F32", GGML_Q4_0: "Q4_0", GGML_Q8_0: "Q8_0"}[weight_type]}
    info["pre_tokenizer"] = preset
    print(f"wrote {out}: {info['bytes']} bytes, {len(w.tensors)} tensors ({arch}, {info['weights']}), tokenizer.ggml.pre {preset}")
    if unmatched:
        # Not refused: llama.cpp's /completion and /v1/completions take the prompt as token ids, and the GGUF's
        # vocabulary is the model's, so a client that sends ids (Ghostline does, after its connect-time check)
        # gets exactly the model. Text sent to the server (or to Ollama, which takes only text) is split
        # differently: issue 27 measured 492 of 492 real snippets split otherwise, 16.7% more tokens.
        print(
            f"warning: llama.cpp has no pre-tokenizer preset for this tokenizer's regex {unmatched}; "
            f"tokenizer.ggml.pre is '{preset}', so llama-server splits text into other tokens than the model was trained on. "
            "Exact only with prompts as token ids: llama.cpp /completion and /v1/completions (Ghostline sends them when it "
            "finds the server's vocabulary is the model's). Do not serve this GGUF through Ollama: /api/generate takes only text.",
            file=sys.stderr,
        )
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", nargs="?", help="Hugging Face checkpoint folder")
    ap.add_argument("out", nargs="?", help="the .gguf file to write")
    ap.add_argument("--safetensors", help="default MODEL_DIR/model.safetensors (or the index of a sharded set)")
    q = ap.add_mutually_exclusive_group()
    q.add_argument("--q8_0", action="store_true")
    q.add_argument("--q4_0", action="store_true")
    ap.add_argument("--compare-codes", nargs=2, metavar=("GGUF", "ONNX"), help="compare, do not export")
    a = ap.parse_args()
    if a.compare_codes:
        compare_q4_codes(*a.compare_codes)
    elif a.model_dir and a.out:
        export(a.model_dir, a.out, a.safetensors, a.q8_0, a.q4_0)
    else:
        ap.error("MODEL_DIR and OUT.gguf are needed")


if __name__ == "__main__":
    main()
