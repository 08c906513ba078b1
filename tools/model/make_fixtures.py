"""Make the tiny random-weight test model at test/fixtures/tiny-llama/ (deterministic).

Files: config.json, generation_config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx,
reference.json (+ reference_logits.bin): torch reference for prefill + 20 greedy decode steps.
The same weights go to test/fixtures/tiny-llama-fused/ in Ghostline's lean graph (same reference): written as a
Hugging Face folder (float32 model.safetensors, so the fixture stays exact) and converted by
`node dist/cli.js convert --quant fp32` (src/converter), so run `node esbuild.js` first.

tiny-llama/onnx/model.onnx (torch.onnx's trace) is kept when it exists and only checked against the regenerated
weights: today's export names its initializers differently from the committed file (HF names), the rest is the same;
--rewrite-hf-onnx writes it anew.

usage: /usr/bin/python3 tools/model/make_fixtures.py [--rewrite-hf-onnx]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bpe  # noqa: E402
from export_onnx import check_with_node, export, write_folder_files  # noqa: E402
from llama import LlamaConfig, LlamaForCausalLM  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(REPO, "test", "fixtures", "tiny-llama")
OUT_FUSED = os.path.join(REPO, "test", "fixtures", "tiny-llama-fused")
CLI = os.path.join(REPO, "dist", "cli.js")

# Training text for the tiny BPE: written for this project (same licence as the repository).
TRAIN_TEXT = '''
def fibonacci(n):
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


def factorial(n: int) -> int:
    """Return n! for a non-negative integer."""
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result


class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        if not self.items:
            raise IndexError("pop from empty stack")
        return self.items.pop()

    def __len__(self):
        return len(self.items)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\\n")
            if line and not line.startswith("#"):
                yield line


import os
import sys
from typing import Dict, List, Optional

def main(argv: Optional[List[str]] = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    counts: Dict[str, int] = {}
    for name in args:
        counts[name] = counts.get(name, 0) + 1
    print(f"{len(counts)} unique names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''.lstrip() + '''
export function add(a: number, b: number): number {
  return a + b;
}

export function clamp(value: number, min: number, max: number): number {
  if (value < min) {
    return min;
  }
  if (value > max) {
    return max;
  }
  return value;
}

interface User {
  id: number;
  name: string;
  email?: string;
}

export class UserStore {
  private users = new Map<number, User>();

  add(user: User): void {
    this.users.set(user.id, user);
  }

  get(id: number): User | undefined {
    return this.users.get(id);
  }

  find(predicate: (user: User) => boolean): User[] {
    const result: User[] = [];
    for (const user of this.users.values()) {
      if (predicate(user)) {
        result.push(user);
      }
    }
    return result;
  }
}

const debounce = (fn, delay) => {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), delay);
  };
};

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`HTTP ${response.status}`);
  }
  return response.json();
}

module.exports = { debounce, fetchJson };
'''

PROMPT = "import os\n\ndef fibonacci(n):\n    if n <"
VOCAB_SIZE = 384
N_DECODE = 20


def greedy_reference(model: LlamaForCausalLM, prompt_ids, n_decode: int):
    """Prefill (logits of the last position), then n_decode greedy steps with the KV cache."""
    cfg = model.cfg
    kvh, hd = cfg.num_key_value_heads, cfg.head_dim
    ids = torch.tensor([prompt_ids])
    n = ids.shape[1]
    past = [(torch.zeros(1, kvh, 0, hd), torch.zeros(1, kvh, 0, hd)) for _ in range(cfg.num_hidden_layers)]
    with torch.no_grad():
        logits, past = model(ids, torch.ones(1, n, dtype=torch.long), torch.arange(n)[None], past,
                             torch.tensor(1))
        rows = [logits[0, -1].clone()]
        tokens = [int(rows[-1].argmax())]
        for step in range(n_decode):
            pos = n + step
            logits, past = model(torch.tensor([[tokens[-1]]]), torch.ones(1, pos + 1, dtype=torch.long),
                                 torch.tensor([[pos]]), past, torch.tensor(1))
            rows.append(logits[0, -1].clone())
            tokens.append(int(rows[-1].argmax()))
    return torch.stack(rows), tokens


def min_margin(rows: torch.Tensor) -> float:
    top2 = rows.topk(2, dim=-1).values
    return float((top2[:, 0] - top2[:, 1]).min())


def convert_lean(model: LlamaForCausalLM, out: str) -> None:
    """The model as a Hugging Face folder (float32 weights, tiny-llama's tokenizer files), converted by
    `ghostline convert --quant fp32` into `out` (replaced)."""
    tmp = tempfile.mkdtemp(prefix="ghostline-fixture-")
    try:
        ckpt = os.path.join(tmp, "tiny-llama")  # config.json records the folder's name: keep it fixed
        write_folder_files(model, ckpt, extra_config={"_comment": "tiny-llama's weights, the lean graph of "
                                                      "`ghostline convert --quant fp32`"})
        for f in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(OUT, f), os.path.join(ckpt, f))
        shutil.rmtree(out, ignore_errors=True)
        r = subprocess.run(["node", CLI, "convert", "--from", ckpt, "--out", out, "--quant", "fp32"],
                           capture_output=True, text=True, cwd=REPO)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            raise SystemExit("ghostline convert failed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewrite-hf-onnx", action="store_true",
                    help="export tiny-llama/onnx/model.onnx again even if it exists")
    a = ap.parse_args()
    if not os.path.exists(CLI):
        raise SystemExit(f"{CLI} not found: run `node esbuild.js` first")
    os.makedirs(os.path.join(OUT, "onnx"), exist_ok=True)
    # tokenizer
    vocab, merges = bpe.train_bpe([TRAIN_TEXT], VOCAB_SIZE, min_frequency=2)
    vocab_size = len(vocab)
    bpe.save(OUT, vocab, merges, model_max_length=1024)
    enc = bpe.Encoder(vocab, merges)
    n_tok = bpe.check_against_js(OUT, bpe.SAMPLE_TEXTS + [TRAIN_TEXT, PROMPT], enc)
    print(f"tokenizer: {vocab_size} tokens, {len(merges)} merges; JS == Python on {n_tok} tokens")
    prompt_ids = enc.encode(PROMPT)

    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5,
                      rope_theta=10000.0, max_position_embeddings=1024, eos_token_id=vocab["<|endoftext|>"])
    # Pick the first seed whose greedy continuation varies and whose argmax margins are clear.
    chosen = None
    for seed in range(100):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(cfg)
        model.init_weights(std=0.35, embed_std=0.8, seed=seed)
        with torch.no_grad():  # shrink byte tokens that are not printable ASCII so greedy text is readable
            for tok, i in vocab.items():
                b = enc.token_bytes(i)
                if len(b) == 1 and (b[0] >= 0x7F or (b[0] < 0x20 and b[0] not in (9, 10))):
                    model.model.embed_tokens.weight[i] *= 0.1
        model.eval()
        rows, tokens = greedy_reference(model, prompt_ids, N_DECODE)
        distinct = len(set(tokens))
        probs = torch.softmax(rows, -1)
        if distinct >= 10 and min_margin(rows) > 0.05 and float(probs.max(-1).values.mean()) > 0.2:
            chosen = (seed, model, rows, tokens)
            break
    if chosen is None:
        raise SystemExit("no seed gave a varied greedy continuation")
    seed, model, rows, tokens = chosen
    probs = torch.softmax(rows, -1)
    print(f"seed {seed}: {len(set(tokens))} distinct greedy tokens, min top1-top2 margin {min_margin(rows):.3f}, "
          f"mean top1 prob {float(probs.max(-1).values.mean()):.3f}")

    onnx_path = os.path.join(OUT, "onnx", "model.onnx")
    if a.rewrite_hf_onnx or not os.path.exists(onnx_path):
        export(model, onnx_path)
    else:
        print(f"kept {onnx_path}; checking it against these weights")
    write_folder_files(model, OUT, extra_config={"_comment": "tiny random-weight test model (not trained)"},
                       safetensors=False)
    worst = check_with_node(model, onnx_path)
    print(f"onnxruntime-node vs torch: max abs diff {worst:.2e}")
    convert_lean(model, OUT_FUSED)
    print(f"lean graph written by ghostline convert to {OUT_FUSED} (checked against the reference by "
          "test/engine/parity.test.ts)")

    rows_np = rows.numpy().astype("<f4")
    rows_np.tofile(os.path.join(OUT, "reference_logits.bin"))
    ref = {
        "description": "Torch reference for the tiny random-weight model: prefill of prompt_ids (past 0, "
                       "position_ids 0..n-1, num_logits_to_keep 1), then greedy decode with the KV cache. "
                       "rows[0] = logits of the last prompt position after prefill; for i >= 1, rows[i] = "
                       "logits after feeding greedy_tokens[i-1] at position n_prompt + i - 1. "
                       "greedy_tokens[i] = argmax(rows[i]). So greedy_tokens[0..n_decode-1] are the fed "
                       "tokens and greedy_tokens has n_decode + 1 entries.",
        "prompt": PROMPT,
        "prompt_ids": prompt_ids,
        "n_prompt": len(prompt_ids),
        "n_decode": N_DECODE,
        "greedy_tokens": tokens,
        "greedy_text": enc.decode(tokens),
        "logits_file": "reference_logits.bin",
        "logits_layout": {"dtype": "float32", "endianness": "little", "rows": int(rows_np.shape[0]),
                          "cols": int(rows_np.shape[1]), "order": "row-major: prefill row, then decode rows"},
        "min_top1_top2_margin": round(min_margin(rows), 4),
        "onnx_vs_torch_max_abs_diff": worst,
        "seed": seed,
        "tokenizer_samples": [{"text": t, "ids": enc.encode(t)} for t in bpe.SAMPLE_TEXTS],
    }
    with open(os.path.join(OUT, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, indent=1, ensure_ascii=False)
    total = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(OUT) for fn in fns)
    print(f"greedy text: {ref['greedy_text']!r}")
    print(f"fixture size {total / 1e6:.2f} MB at {OUT}")


if __name__ == "__main__":
    main()
