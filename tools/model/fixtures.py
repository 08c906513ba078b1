"""What the fixture generators (make_fixtures.py, make_family_fixtures.py, make_checkpoint_fixtures.py) share:
the tiny tokenizers' training text, the greedy torch reference and its checks."""
from __future__ import annotations

import os

import torch

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

def greedy_rows(forward, prompt_ids, n_decode: int, past=None):
    """Prefill, then n_decode greedy steps with the KV cache; forward(ids, attention_mask, position_ids, past) ->
    (logits, past). rows[0] = float32 logits of the last prompt position, rows[i] = logits after feeding tokens[i-1];
    tokens[i] = argmax(rows[i])."""
    n = len(prompt_ids)
    with torch.no_grad():
        logits, past = forward(torch.tensor([prompt_ids]), torch.ones(1, n, dtype=torch.long), torch.arange(n)[None],
                               past)
        rows = [logits[0, -1].float().clone()]
        tokens = [int(rows[-1].argmax())]
        for step in range(n_decode):
            pos = n + step
            logits, past = forward(torch.tensor([[tokens[-1]]]), torch.ones(1, pos + 1, dtype=torch.long),
                                   torch.tensor([[pos]]), past)
            rows.append(logits[0, -1].float().clone())
            tokens.append(int(rows[-1].argmax()))
    return torch.stack(rows), tokens


def min_margin(rows: torch.Tensor) -> float:
    """Smallest top1 - top2 logit gap over the rows: how clear every greedy pick is."""
    top2 = rows.topk(2, dim=-1).values
    return float((top2[:, 0] - top2[:, 1]).min())


def unprintable_byte(b: bytes) -> bool:
    """A single-byte token that is not printable ASCII, tab or newline: its embedding is shrunk so that greedy text
    stays readable."""
    return len(b) == 1 and (b[0] >= 0x7F or (b[0] < 0x20 and b[0] not in (9, 10)))


def reference_fields(folder: str, prompt: str, prompt_ids, tokens, text: str, rows: torch.Tensor) -> dict:
    """reference.json's fields about a greedy reference (greedy_rows' rows and tokens); writes the rows to
    folder/reference_logits.bin (float32 LE, row-major)."""
    a = rows.numpy().astype("<f4")
    a.tofile(os.path.join(folder, "reference_logits.bin"))
    return {"prompt": prompt, "prompt_ids": prompt_ids, "n_prompt": len(prompt_ids), "n_decode": len(tokens) - 1,
            "greedy_tokens": tokens, "greedy_text": text, "logits_file": "reference_logits.bin",
            "logits_layout": {"dtype": "float32", "endianness": "little", "rows": int(a.shape[0]),
                              "cols": int(a.shape[1]), "order": "row-major: prefill row, then decode rows"},
            "min_top1_top2_margin": round(min_margin(rows), 4)}
