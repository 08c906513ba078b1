"""A small Llama-style causal LM in PyTorch with Hugging Face tensor names.

RMSNorm, rotary position embeddings (HF rotate_half layout), SwiGLU MLP, tied input/output embeddings,
grouped KV heads, optional q/k/v bias. One forward serves training (no cache) and inference/export
(past key/values, attention mask, position ids, last-N logits).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import safetensors_io


@dataclass
class LlamaConfig:
    vocab_size: int = 4096
    hidden_size: int = 256
    intermediate_size: int = 688
    num_hidden_layers: int = 6
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    head_dim: int = 32
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_position_embeddings: int = 2048
    attention_bias: bool = False
    bos_token_id: Optional[int] = None
    eos_token_id: int = 0
    initializer_range: float = 0.02

    def to_hf(self, extra: Optional[dict] = None) -> dict:
        d = {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "hidden_act": "silu",
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "rope_scaling": None,
            "max_position_embeddings": self.max_position_embeddings,
            "attention_bias": self.attention_bias,
            "attention_dropout": 0.0,
            "mlp_bias": False,
            "tie_word_embeddings": True,
            "bos_token_id": self.bos_token_id,
            "eos_token_id": self.eos_token_id,
            "initializer_range": self.initializer_range,
            "torch_dtype": "float32",
            "use_cache": True,
        }
        if extra:
            d.update(extra)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "LlamaConfig":
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: v for k, v in d.items() if k in names})


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    d = x.shape[-1] // 2
    return torch.cat((-x[..., d:], x[..., :d]), dim=-1)


def rope_cos_sin(position_ids: torch.Tensor, head_dim: int, theta: float, dtype=None, linear_factor=None):
    """position_ids [b, s] -> cos, sin [b, 1, s, head_dim] (HF layout: frequencies repeated twice), cast to dtype
    when given (a traced graph keeps even a no-op cast); linear_factor: rope_scaling linear (positions / factor)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    t = position_ids.float()
    if linear_factor:
        t = t / linear_factor
    freqs = t[:, :, None] * inv_freq[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cast = (lambda x: x) if dtype is None else (lambda x: x.to(dtype))
    return cast(emb.cos()[:, None]), cast(emb.sin()[:, None])


def causal_mask(s: int, past_len, attention_mask=None):
    """bool [1 or b, 1, s, past_len + s]: new query i (absolute index past_len + i) sees key j iff j <= past_len + i,
    and only keys whose attention_mask is 1."""
    q_idx = torch.arange(s, dtype=torch.long) + past_len
    k_idx = torch.arange(past_len + s, dtype=torch.long)
    mask = (k_idx[None, :] <= q_idx[:, None])[None, None]
    return mask if attention_mask is None else mask & (attention_mask[:, None, None, :] > 0)


def repeat_kv(k, v, b, kvh: int, rep: int, hd: int):
    """Grouped-query attention: each of the kvh key/value heads serves rep query heads. b is the batch size the
    caller read from its input: reading it from k here would add shape ops to a traced graph."""
    if rep == 1:
        return k, v
    t = k.shape[2]
    return (k[:, :, None].expand(b, kvh, rep, t, hd).reshape(b, kvh * rep, t, hd),
            v[:, :, None].expand(b, kvh, rep, t, hd).reshape(b, kvh * rep, t, hd))


def last_positions(x, keep):
    """x [b, s, h] -> its last `keep` positions (keep: 0-d int tensor; 0 = all)."""
    seq = x.shape[1]
    start = torch.where(keep > 0, seq - keep, torch.zeros_like(keep))
    return torch.index_select(x, 1, torch.arange(start, seq))


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        h, hd = cfg.hidden_size, cfg.head_dim
        self.q_proj = nn.Linear(h, cfg.num_attention_heads * hd, bias=cfg.attention_bias)
        self.k_proj = nn.Linear(h, cfg.num_key_value_heads * hd, bias=cfg.attention_bias)
        self.v_proj = nn.Linear(h, cfg.num_key_value_heads * hd, bias=cfg.attention_bias)
        self.o_proj = nn.Linear(cfg.num_attention_heads * hd, h, bias=False)

    def forward(self, x, cos, sin, mask, past: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        cfg = self.cfg
        b, s, _ = x.shape
        nh, kvh, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        q = self.q_proj(x).view(b, s, nh, hd).transpose(1, 2)
        k = self.k_proj(x).view(b, s, kvh, hd).transpose(1, 2)
        v = self.v_proj(x).view(b, s, kvh, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past is not None:
            k = torch.cat([past[0].to(k.dtype), k], dim=2)
            v = torch.cat([past[1].to(v.dtype), v], dim=2)
        present = (k, v)
        k, v = repeat_kv(k, v, b, kvh, nh // kvh, hd)
        scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(hd))
        if mask.dtype == torch.bool:  # inference / export: fp32 softmax
            scores = scores.float().masked_fill(~mask, -1e9)
            probs = torch.softmax(scores, dim=-1).to(v.dtype)
        else:  # training: additive causal mask in the activation dtype (bf16 softmax is ~4x faster on CPU)
            probs = torch.softmax(scores + mask, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, nh * hd)
        return self.o_proj(out), present


class MLP(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, mask, past=None):
        a, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, present


class LlamaBody(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        self.model = LlamaBody(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight  # tied

    def init_weights(self, std: float = 0.02, embed_std: Optional[float] = None, seed: Optional[int] = None):
        g = torch.Generator().manual_seed(seed) if seed is not None else None
        n_layers = self.cfg.num_hidden_layers
        for name, p in self.named_parameters():
            if name.endswith("layernorm.weight") or name == "model.norm.weight":
                nn.init.ones_(p)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)
            elif name == "model.embed_tokens.weight":
                with torch.no_grad():
                    p.copy_(torch.randn(p.shape, generator=g) * (embed_std if embed_std is not None else std))
            else:
                s = std
                if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                    s = std / math.sqrt(2 * n_layers)
                with torch.no_grad():
                    p.copy_(torch.randn(p.shape, generator=g) * s)

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None,
                position_ids: Optional[torch.Tensor] = None,
                past_key_values: Optional[List[Tuple[torch.Tensor, torch.Tensor]]] = None,
                num_logits_to_keep: Optional[torch.Tensor] = None):
        """Returns (logits, presents).

        Training: forward(input_ids) -> logits for every position, presents unused.
        Inference: attention_mask [b, past+seq] (1 = attend), position_ids [b, seq], past list of (k, v)
        [b, kvh, past, hd]; num_logits_to_keep (0-d int tensor): logits for the last N positions
        (0 = all positions).
        """
        cfg = self.cfg
        b, s = input_ids.shape
        x = self.model.embed_tokens(input_ids)
        past_len = past_key_values[0][0].shape[2] if past_key_values is not None else 0
        if position_ids is None:
            position_ids = (torch.arange(s, dtype=torch.long) + past_len)[None].expand(b, s)
        cos, sin = rope_cos_sin(position_ids, cfg.head_dim, cfg.rope_theta, x.dtype)
        mask = causal_mask(s, past_len, attention_mask)
        if attention_mask is None and past_key_values is None and not torch.jit.is_tracing():
            # plain causal training: additive mask in the dtype attention scores will have
            dt = torch.get_autocast_cpu_dtype() if torch.is_autocast_cpu_enabled() else x.dtype
            mask = torch.zeros(s, s, dtype=dt).masked_fill(~mask[0, 0], -1e4 if dt != torch.float32 else -1e9)
        presents = []
        for i, layer in enumerate(self.model.layers):
            past = past_key_values[i] if past_key_values is not None else None
            x, present = layer(x, cos, sin, mask, past)
            presents.append(present)
        x = self.model.norm(x)
        if num_logits_to_keep is not None:
            x = last_positions(x, num_logits_to_keep)
        logits = self.lm_head(x)
        return logits, presents

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def state_dict_hf(model: LlamaForCausalLM) -> dict:
    """HF-named fp32 tensors (lm_head omitted: tied)."""
    sd = {k: v.detach().float().contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    return sd


def save_safetensors(path: str, tensors: dict, metadata: Optional[dict] = None) -> None:
    """torch tensors -> a safetensors file (names sorted, as the safetensors library writes them)."""
    dtypes = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}
    entries, blobs = [], []
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        data = t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes()
        entries.append((name, dtypes[t.dtype], list(t.shape), len(data)))
        blobs.append(data)
    with open(path, "wb") as f:
        f.write(safetensors_io.encode_header(entries, metadata))
        for d in blobs:
            f.write(d)


def load_safetensors(path: str) -> dict:
    """HF-named float32 tensors of a .safetensors file (or a sharded set's .index.json)."""
    st = safetensors_io.SafeTensors(path)
    return {name: torch.from_numpy(st.all(name)) for name in st}
