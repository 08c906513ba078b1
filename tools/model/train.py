"""Train the Ghostline default code model (Llama architecture) with fill-in-the-middle, on CPU or CUDA.

  - documents packed into rows of --seq-len tokens separated by <|endoftext|>
  - FIM (StarCoder style) on --fim-rate of the rows: a window of a random document is split at a cursor
    (half of the time inside a line, the middle being the rest of that line, sometimes a few more lines;
    otherwise a random span), encoded as PSM  <fim_prefix>P<fim_suffix>S<fim_middle>M<|endoftext|>
    or SPM  <fim_prefix><fim_suffix>S<fim_middle>PM<|endoftext|>  (--spm-rate); the row is then filled
    up with packed documents.
  - AdamW, linear warmup then cosine decay over the time budget (--time-budget-min), checkpoints every
    --ckpt-every-min minutes, --resume continues a run (same schedule, elapsed time carried over),
    --init-from starts a new run (new schedule, usually a lower --lr) from another run's weights.
  - time spent stopped (SIGSTOP, e.g. while benchmarks need a quiet machine) is not counted in the budget.
  - log (JSON lines) in <run>/train.log: training loss, validation loss on held-out packages in nats/token
    and bits per byte, FIM middle loss.

usage:
  nohup nice -n 10 /usr/bin/python3 -m tools.model.train --run tools/model/runs/r1 --tokenizer DIR \
      --time-budget-min 100 &
"""
from __future__ import annotations

import argparse
import bisect
import json
import math
import os
import random
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts its OpenMP threads
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from . import HERE, bpe, load_jsonl  # noqa: E402
from .llama import LlamaConfig, LlamaForCausalLM, load_safetensors  # noqa: E402


# ------------------------------------------------------------------------------------------- data

def tokenize_corpus(enc: bpe.Encoder, docs, cache_path: str):
    """Token ids of all documents (uint16, concatenated) + offsets; cached as .npz."""
    if os.path.exists(cache_path):
        z = np.load(cache_path)
        return z["ids"], z["offsets"]
    chunks, offsets, n = [], [0], 0
    t0 = time.time()
    for i, d in enumerate(docs):
        ids = enc.encode_ordinary(d["text"])
        chunks.append(np.asarray(ids, dtype=np.uint16))
        n += len(ids)
        offsets.append(n)
        if i % 2000 == 0:
            print(f"  tokenized {i}/{len(docs)} docs, {n} tokens, {time.time() - t0:.0f}s", flush=True)
    ids = np.concatenate(chunks)
    offsets = np.asarray(offsets, dtype=np.int64)
    np.savez(cache_path, ids=ids, offsets=offsets)
    return ids, offsets


class Sampler:
    def __init__(self, enc: bpe.Encoder, docs, ids, offsets, seq_len: int, fim_rate: float, spm_rate: float,
                 seed: int):
        self.enc, self.docs, self.ids, self.offsets = enc, docs, ids, offsets
        self.T = seq_len + 1
        self.fim_rate, self.spm_rate = fim_rate, spm_rate
        self.rng = random.Random(seed)
        self.v = enc.vocab
        self.EOS = self.v[bpe.EOS]
        self.order = list(range(len(docs)))
        self.rng.shuffle(self.order)
        self.pos = 0      # index into order
        self.off = 0      # token offset inside the current doc (including its trailing EOS)
        self.cum = np.cumsum([len(d["text"]) for d in docs])

    def _lm_tokens(self, n: int):
        out = []
        while len(out) < n:
            d = self.order[self.pos]
            a, b = self.offsets[d], self.offsets[d + 1]
            doc = np.append(self.ids[a:b], self.EOS)
            take = doc[self.off:self.off + n - len(out)]
            out.extend(take.tolist())
            self.off += len(take)
            if self.off >= len(doc):
                self.off = 0
                self.pos += 1
                if self.pos >= len(self.order):
                    self.pos = 0
                    self.rng.shuffle(self.order)
        return out

    def pick_span(self, text: str, rng: random.Random):
        """(start, end) of the middle.

        Half of the time the middle is a whole non-blank line from its start (sometimes with a few more
        lines): Ghostline's prompt builder splits the prefix at the start of the cursor line and puts the
        line's text before the cursor after <fim_middle>, so the model learns to continue that line and end
        it with <|endoftext|>. Otherwise a random span (cursor anywhere)."""
        if rng.random() < 0.5:
            for _ in range(10):
                c = rng.randrange(0, len(text))
                ls = text.rfind("\n", 0, c) + 1
                le = text.find("\n", c)
                le = len(text) if le < 0 else le
                if text[ls:le].strip():
                    end = le
                    if rng.random() < 0.3:
                        for _ in range(rng.randint(1, 4)):
                            nx = text.find("\n", end + 1)
                            end = len(text) if nx < 0 else nx
                    return ls, end
        c = rng.randrange(0, len(text))
        length = min(int(rng.expovariate(1 / 150)), 600)
        return c, min(len(text), c + length)

    def fim_tokens(self, text: str, rng: random.Random, spm: bool, max_len: int):
        c, e = self.pick_span(text, rng)
        lp = 1500 if rng.random() < 0.7 else rng.randint(0, 1500)
        ls = 500 if rng.random() < 0.7 else rng.randint(0, 500)
        prefix, middle, suffix = text[max(0, c - lp):c], text[c:e], text[e:e + ls]
        enc = self.enc
        P, M, S = enc.encode_ordinary(prefix), enc.encode_ordinary(middle), enc.encode_ordinary(suffix)
        M = M[: max_len // 2]
        budget = max_len - 4 - len(M)
        if len(P) + len(S) > budget:
            s_keep = min(len(S), max(budget // 4, budget - len(P)))
            S = S[:s_keep]
            P = P[len(P) - (budget - len(S)):] if budget - len(S) > 0 else []
        v = self.v
        if spm:
            toks = [v[bpe.FIM_PREFIX], v[bpe.FIM_SUFFIX]] + S + [v[bpe.FIM_MIDDLE]] + P + M + [self.EOS]
        else:
            toks = [v[bpe.FIM_PREFIX]] + P + [v[bpe.FIM_SUFFIX]] + S + [v[bpe.FIM_MIDDLE]] + M + [self.EOS]
        return toks, len(toks) - len(M) - 1  # index of the first middle token

    def random_doc(self):
        x = self.rng.randrange(int(self.cum[-1]))
        return self.docs[bisect.bisect_right(self.cum, x)]["text"]

    def row(self):
        toks = []
        if self.rng.random() < self.fim_rate:
            toks, _ = self.fim_tokens(self.random_doc(), self.rng, self.rng.random() < self.spm_rate, self.T)
        toks = toks + self._lm_tokens(self.T - len(toks))
        return toks

    def batch(self, bs: int):
        return torch.tensor([self.row() for _ in range(bs)], dtype=torch.long)


def build_valid(enc, docs, ids, offsets, seq_len, n_rows, n_fim, seed=0):
    """Fixed validation rows (packed, no FIM) and FIM line-completion samples from held-out packages."""
    s = Sampler(enc, docs, ids, offsets, seq_len, 0.0, 0.0, seed)
    rows = s.batch(n_rows)
    rng = random.Random(seed + 1)
    fims = []
    while len(fims) < n_fim:
        text = s.random_doc()
        s_rng = random.Random(rng.randrange(1 << 30))
        toks, mstart = s.fim_tokens(text, s_rng, False, seq_len + 1)
        fims.append((toks, mstart))
    return rows, fims


def token_bytes_table(enc: bpe.Encoder, vocab_size: int):
    return torch.tensor([len(enc.token_bytes(i)) for i in range(vocab_size)], dtype=torch.float64)


@torch.no_grad()
def evaluate(model, rows, fims, tb, autocast_dtype, device):
    model.eval()
    nll, nbytes, ntok = 0.0, 0.0, 0
    for i in range(0, len(rows), 8):
        x = rows[i:i + 8].to(device)
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            logits, _ = model(x[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="sum")
        nll += float(loss)
        nbytes += float(tb[x[:, 1:].cpu()].sum())
        ntok += x[:, 1:].numel()
    fim_nll, fim_tok, fim_bytes = 0.0, 0, 0.0
    for toks, ms in fims:
        x = torch.tensor([toks], device=device)
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            logits, _ = model(x[:, :-1])
        tgt = x[0, ms:]
        lg = logits[0, ms - 1:].float()
        fim_nll += float(F.cross_entropy(lg, tgt, reduction="sum"))
        fim_tok += len(tgt)
        fim_bytes += float(tb[tgt.cpu()].sum())
    model.train()
    return {"val_loss": nll / ntok, "val_bpb": nll / math.log(2) / nbytes, "val_bytes_per_token": nbytes / ntok,
            "fim_middle_loss": fim_nll / fim_tok, "fim_middle_bpb": fim_nll / math.log(2) / max(1.0, fim_bytes)}


# ------------------------------------------------------------------------------------------- main

def lr_at(frac: float, step: int, a) -> float:
    if step < a.warmup_steps:
        return a.lr * (step + 1) / a.warmup_steps
    frac = min(1.0, max(0.0, frac))
    return a.min_lr + 0.5 * (a.lr - a.min_lr) * (1 + math.cos(math.pi * frac))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--tokenizer", required=True, help="folder with tokenizer.json")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--intermediate", type=int, default=704)
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr", type=float, default=1e-4)
    ap.add_argument("--warmup-steps", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--fim-rate", type=float, default=0.5)
    ap.add_argument("--spm-rate", type=float, default=0.5)
    ap.add_argument("--time-budget-min", type=float, default=60)
    ap.add_argument("--ckpt-every-min", type=float, default=5)
    ap.add_argument("--eval-every-min", type=float, default=10)
    ap.add_argument("--val-rows", type=int, default=48)
    ap.add_argument("--val-fim", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--init-from", help="checkpoint (.pt) or shipped model.safetensors whose weights (not optimizer "
                                        "or schedule) start this run")
    ap.add_argument("--init-tokens", type=int, default=0,
                    help="tokens already seen by a --init-from .safetensors (for the log's totals)")
    ap.add_argument("--bench-steps", type=int, default=0, help="only time this many steps")
    a = ap.parse_args()

    os.makedirs(a.run, exist_ok=True)
    torch.set_num_threads(a.threads)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    autocast_dtype = torch.bfloat16
    torch.manual_seed(a.seed)

    enc = bpe.Encoder.from_tokenizer_json(os.path.join(a.tokenizer, "tokenizer.json"))
    V = len(enc.vocab)
    cache = os.path.join(a.data, f"tok{V}")
    os.makedirs(cache, exist_ok=True)
    train_docs = load_jsonl(os.path.join(a.data, "train.jsonl"))
    valid_docs = load_jsonl(os.path.join(a.data, "valid.jsonl"))
    if a.bench_steps:
        train_docs, valid_docs, cache = train_docs[:300], valid_docs[:100], os.path.join(cache, "bench")
        os.makedirs(cache, exist_ok=True)
    tr_ids, tr_off = tokenize_corpus(enc, train_docs, os.path.join(cache, "train.npz"))
    va_ids, va_off = tokenize_corpus(enc, valid_docs, os.path.join(cache, "valid.npz"))
    tr_bytes = sum(len(d["text"].encode("utf-8")) for d in train_docs)
    print(f"train: {len(train_docs)} docs, {len(tr_ids)} tokens ({tr_bytes / len(tr_ids):.3f} bytes/token); "
          f"valid: {len(valid_docs)} docs, {len(va_ids)} tokens", flush=True)

    cfg = LlamaConfig(vocab_size=V, hidden_size=a.hidden, intermediate_size=a.intermediate,
                      num_hidden_layers=a.layers, num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                      head_dim=a.hidden // a.heads, max_position_embeddings=a.seq_len,
                      eos_token_id=enc.vocab[bpe.EOS])
    model = LlamaForCausalLM(cfg)
    model.init_weights(std=0.02, seed=a.seed)
    model.to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    state = {"step": 0, "elapsed": 0.0, "tokens": 0, "best_val": None}
    ckpt_path = os.path.join(a.run, "ckpt_last.pt")
    init_tokens = 0
    if a.init_from and not (a.resume and os.path.exists(ckpt_path)):
        if a.init_from.endswith(".safetensors"):
            # a shipped model (HF names, lm_head tied to the embedding): its checkpoints may be long gone
            sd = load_safetensors(a.init_from)
            sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
            model.load_state_dict(sd)
            init_tokens = a.init_tokens
            print(f"initialised from {a.init_from}: {init_tokens} tokens (from --init-tokens)", flush=True)
        else:
            ck = torch.load(a.init_from, map_location="cpu")
            model.load_state_dict(ck["model"])
            init_tokens = ck["state"]["tokens"]
            print(f"initialised from {a.init_from}: step {ck['state']['step']}, {init_tokens} tokens", flush=True)
    if a.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path, map_location="cpu")
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        state = ck["state"]
        print(f"resumed at step {state['step']}, {state['elapsed'] / 60:.1f} min, {state['tokens']} tokens",
              flush=True)
    sampler = Sampler(enc, train_docs, tr_ids, tr_off, a.seq_len, a.fim_rate, a.spm_rate,
                      a.seed * 1000003 + state["step"])
    vrows, vfims = build_valid(enc, valid_docs, va_ids, va_off, a.seq_len, a.val_rows, a.val_fim)
    tb = token_bytes_table(enc, V)
    log = open(os.path.join(a.run, "train.log"), "a")

    def write(obj):
        obj["time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        log.write(json.dumps(obj) + "\n")
        log.flush()
        print(json.dumps(obj), flush=True)

    if state["step"] == 0 and not a.bench_steps:
        write({"event": "start", "config": cfg.to_hf(), "params": model.num_params(), "args": vars(a),
               "train_tokens_available": int(len(tr_ids)), "train_bytes": tr_bytes,
               "valid_tokens": int(len(va_ids)), "init_tokens": init_tokens})

    def save(path):
        tmp = path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state,
                    "config": cfg.to_hf(), "args": vars(a)}, tmp)
        os.replace(tmp, path)

    def do_eval():
        r = evaluate(model, vrows, vfims, tb, autocast_dtype, device)
        r.update(event="eval", step=state["step"], tokens=state["tokens"], minutes=round(state["elapsed"] / 60, 2))
        write(r)
        if state["best_val"] is None or r["val_loss"] < state["best_val"]:
            state["best_val"] = r["val_loss"]
            save(os.path.join(a.run, "ckpt_best.pt"))
        return r

    if state["step"] == 0 and a.init_from and not a.bench_steps:
        do_eval()  # the starting point, measured on this run's validation rows
    budget = a.time_budget_min * 60
    last_ckpt = last_eval = time.time()
    t_prev = time.time()
    loss_acc, n_acc, tok_acc, t_acc = 0.0, 0, 0, 0.0
    model.train()
    bench_t = []
    while state["elapsed"] < budget:
        t0 = time.time()
        x = sampler.batch(a.batch).to(device)
        lr = lr_at(state["elapsed"] / budget, state["step"], a)
        for g in opt.param_groups:
            g["lr"] = lr
        with torch.autocast(device.type, dtype=autocast_dtype):
            logits, _ = model(x[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, V), x[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.time() - t0
        state["step"] += 1
        # a step (or an eval) never takes minutes: a longer gap is the process being stopped, not training
        state["elapsed"] += min(time.time() - t_prev, 120.0)
        t_prev = time.time()
        state["tokens"] += x[:, 1:].numel()
        loss_acc += float(loss)
        n_acc += 1
        tok_acc += x[:, 1:].numel()
        t_acc += dt
        if a.bench_steps:
            bench_t.append(dt)
            if len(bench_t) >= a.bench_steps:
                ts = sorted(bench_t[1:])
                print(f"BENCH params {model.num_params() / 1e6:.2f}M V{V}: {a.batch * a.seq_len / ts[len(ts) // 2]:.0f} tok/s",
                      flush=True)
                return
            continue
        if state["step"] % 20 == 0:
            write({"event": "train", "step": state["step"], "loss": round(loss_acc / n_acc, 4), "lr": round(lr, 6),
                   "tokens": state["tokens"], "tok_per_s": round(tok_acc / t_acc), "minutes": round(state["elapsed"] / 60, 2)})
            loss_acc, n_acc, tok_acc, t_acc = 0.0, 0, 0, 0.0
        if time.time() - last_eval > a.eval_every_min * 60:
            do_eval()
            last_eval = time.time()
        if time.time() - last_ckpt > a.ckpt_every_min * 60:
            save(ckpt_path)
            last_ckpt = time.time()
    do_eval()
    save(ckpt_path)
    write({"event": "done", "step": state["step"], "tokens": state["tokens"], "minutes": round(state["elapsed"] / 60, 2)})


if __name__ == "__main__":
    main()
