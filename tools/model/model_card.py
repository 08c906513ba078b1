"""Write models/<name>/README.md (model card) from the training log, export.json and the licence manifest.

The quality section (rest-of-line exact match / edit similarity) is filled by `npm run eval:quality`; this
script keeps whatever is between the QUALITY markers of an existing README.

usage: /usr/bin/python3 -m tools.model.model_card --run tools/model/runs/r3 --model models/ghostline-code-small \
           [--after tools/model/runs/r1 tools/model/runs/r2]
A run started with `--init-from <run>/ckpt_*.pt` finds its earlier phase by itself; one started from a shipped
`model.safetensors` names its earlier phases with --after.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess

from .synthetic import HELDOUT_OPS, OPS

BEGIN, END = "<!-- QUALITY:BEGIN -->", "<!-- QUALITY:END -->"
PLACEHOLDER = """## Quality on held-out packages

**Placeholder: to be filled from `npm run eval:quality`** (engine end to end, greedy, on
`tools/model/eval/heldout.jsonl`: rest-of-line exact match and edit similarity at random cursor positions,
with the code after the cursor given as FIM suffix and without it), and its speed in Ghostline
(prefill tokens/s, ms per token)."""


def read_run(run: str) -> dict:
    events = [json.loads(line) for line in open(os.path.join(run, "train.log"))]
    return {"run": run, "name": os.path.basename(run.rstrip("/")),
            "start": next(e for e in events if e["event"] == "start"),
            "evals": [e for e in events if e["event"] == "eval"],
            "done": [e for e in events if e["event"] == "done"][-1]}


def training_phases(run: str, after: list) -> list:
    """The runs that made the shipped weights, oldest first (each --init-from continues the one before)."""
    if after:
        return [read_run(r) for r in after] + [read_run(run)]
    phases = [read_run(run)]
    while (init := phases[0]["start"]["args"].get("init_from")) and init.endswith(".pt"):
        phases.insert(0, read_run(os.path.dirname(init)))
    return phases


def held_out_ops() -> str:
    """synthetic.HELDOUT_OPS with their JavaScript names where those differ."""
    names = [py if py == js else f"{py}/{js}" for py, js, *_ in OPS if py in HELDOUT_OPS]
    return ", ".join(f"`{n}`".replace("/", "`/`") for n in names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--after", nargs="*", default=[], help="earlier training phases, oldest first")
    a = ap.parse_args()
    phases = training_phases(a.run, a.after)
    start, evals = phases[-1]["start"], phases[-1]["evals"]
    # minutes and tokens before each phase, for the cumulative columns
    off_min, off_tok = [], []
    for i, ph in enumerate(phases):
        off_min.append(sum(p["done"]["minutes"] for p in phases[:i]))
        off_tok.append(ph["start"].get("init_tokens", 0) if i else 0)
    exp = json.load(open(os.path.join(a.run, "export.json")))
    man = json.load(open(os.path.join(a.model, "licences.json")))
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    best = min(evals, key=lambda e: e["val_loss"])
    p_min, p_tok = off_min[-1], off_tok[-1]
    used = [p for p in man["packages"] if p.get("used")]
    by_lic = {}
    canon = {"expat": "MIT (Expat)", "mit": "MIT (Expat)", "apache": "Apache-2.0", "psf": "PSF-2.0"}
    for p in used:
        k = p["licence"].strip().lower()
        lic = canon.get(k, p["licence"].strip().replace("clause", "Clause").replace("BSD-3 ", "BSD-3-Clause"))
        by_lic.setdefault(lic, [0, 0])
        by_lic[lic][0] += 1
        by_lic[lic][1] += p["bytes"]
    src_bytes = {}
    for p in used:
        k = (p["split"], {"debian": "Python (Debian)", "synthetic": "synthetic helpers (Python, JS, TS)"}.get(
            p["source"], "JavaScript/TypeScript (npm)"))
        src_bytes[k] = src_bytes.get(k, 0) + p["bytes"]
    name = os.path.basename(a.model.rstrip("/"))
    onnx_files = sorted(os.listdir(os.path.join(a.model, "onnx")))
    sizes = {f: os.path.getsize(os.path.join(a.model, f)) for f in os.listdir(a.model)
             if os.path.isfile(os.path.join(a.model, f))}
    total = sum(sizes.values()) + sum(os.path.getsize(os.path.join(a.model, "onnx", f)) for f in onnx_files)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    s = man["summary"]
    old = ""
    readme = os.path.join(a.model, "README.md")
    if os.path.exists(readme):
        m = re.search(re.escape(BEGIN) + r"(.*?)" + re.escape(END), open(readme).read(), re.S)
        if m:
            old = m.group(1).strip()
    quality = old or PLACEHOLDER
    q = exp
    lines = []
    w = lines.append
    w(f"# {name}")
    w("")
    w("Ghostline's built-in code completion model: a small Llama-architecture decoder trained from scratch on "
      "permissively licensed Python, JavaScript and TypeScript, with fill-in-the-middle (FIM). It is tiny "
      f"(a few million parameters, trained for {(p_min + exp['minutes']) / 60:.1f} hours on two CPU cores), so expect short, "
      "syntax-shaped completions, not reasoning. Bigger models (Qwen2.5-Coder, SmolLM2, ...) can be "
      "selected in Ghostline's settings.")
    w("")
    w("## Files")
    w("")
    w("| file | bytes |")
    w("|---|---|")
    for f in sorted(sizes):
        w(f"| `{f}` | {sizes[f]:,} |")
    for f in onnx_files:
        w(f"| `onnx/{f}` | {os.path.getsize(os.path.join(a.model, 'onnx', f)):,} |")
    w(f"| **total** | **{total:,}** |")
    w("")
    w("`model.safetensors` holds the weights in bf16 with Hugging Face Llama tensor names (`lm_head` tied to "
      "`model.embed_tokens`), so `transformers` `LlamaForCausalLM.from_pretrained` can load the folder. "
      "`licences.json` lists every source package with its version, licence, file count and bytes.")
    w("")
    w("## Prompt format")
    w("")
    w("- Plain left-to-right completion: the code before the cursor.")
    w("- Fill-in-the-middle (StarCoder tokens): `<fim_prefix>{before}<fim_suffix>{after}<fim_middle>`; the model "
      "writes the middle and ends it with `<|endoftext|>` (id "
      f"{cfg['eos_token_id']}). Ghostline's layout, `<fim_prefix>{{lines above}}<fim_suffix>{{rest of the line and "
      "lines below}}<fim_middle>{{cursor line up to the cursor}}`, is the one half of the FIM training samples "
      "use (the middle is a whole line, or a few, from its start). It was also trained on the SPM order "
      "`<fim_prefix><fim_suffix>{after}<fim_middle>{before}`.")
    w(f"- Trained context: {cfg['max_position_embeddings']} tokens (prefix, suffix and middle together); "
      "longer prompts must be cut (keep the end of the prefix and the start of the suffix).")
    w(f"- Tokenizer: byte-level BPE, {cfg['vocab_size']} tokens, trained on a 10 MB sample of the training "
      f"corpus; {q['bytes_per_token']:.2f} bytes/token on the held-out packages. Special tokens "
      "`<|endoftext|>` (0), `<fim_prefix>` (1), `<fim_middle>` (2), `<fim_suffix>` (3), `<file_sep>` (4).")
    w("")
    w("## Architecture")
    w("")
    w(f"Llama: {cfg['num_hidden_layers']} layers, hidden {cfg['hidden_size']}, {cfg['num_attention_heads']} "
      f"attention heads of {cfg['head_dim']} with {cfg['num_key_value_heads']} KV heads (grouped-query), SwiGLU "
      f"MLP {cfg['intermediate_size']}, RMSNorm, RoPE (theta {cfg['rope_theta']:g}), tied input/output "
      f"embeddings, vocabulary {cfg['vocab_size']}. **{start['params'] / 1e6:.2f}M parameters.** KV cache: "
      f"{cfg['num_hidden_layers'] * 2 * cfg['num_key_value_heads'] * cfg['head_dim'] * 4 / 1024:.0f} KB per "
      "token in fp32.")
    w("")
    if cfg.get("ghostline", {}).get("graph") == "lean-v1":
        w("ONNX contract: Ghostline's lean one (`src/engine/model/leanContract.ts`): inputs `input_ids`, "
          "`position_ids` (int64 [batch, seq]), `attention_bias` (float32 [seq, cap + seq]: 0 where a query may see a key, -inf "
          "elsewhere), `cache.{i}.key` (float32 [batch, kv_heads, head_dim, cap], keys transposed) and "
          "`cache.{i}.value` ([batch, kv_heads, cap, head_dim]): KV cache buffers with room for `cap` positions, "
          "`num_logits_to_keep` (int64 scalar; logits of the last N positions, 0 = all); outputs `logits` "
          "[batch, N, vocab] and `new_kv` (only the new K/V rows, which the runtime writes into its buffers). "
          "Opset 17 plus onnxruntime's `com.microsoft` operators, so it runs in onnxruntime through Ghostline's "
          "engine (`src/engine/model/onnxModel.ts`), not in other ONNX runtimes; `model.safetensors` is the checkpoint "
          "for anything else.")
        w("")
        w("The graph is written by `ghostline convert` (`src/converter`) from `model.safetensors`, not traced: "
          "fused q/k/v and gate/up `MatMulNBits`, `RotaryEmbedding`, `SkipSimplifiedLayerNormalization` for "
          "RMSNorm and the residual add, grouped query heads folded into the rows of the attention product "
          "instead of copying the KV cache, KV cache buffers fed as inputs with only the new rows returned."
          + (f" Its fp32 conversion has PyTorch's validation loss within {abs(q['fp32_onnx_vs_torch_nll']):.1e} "
             f"nats/token on {q['eval_tokens']:,} held-out tokens." if "fp32_onnx_vs_torch_nll" in q else ""))
    else:
        w("ONNX contract: inputs `input_ids`, `attention_mask`, `position_ids` (int64), "
          "`past_key_values.{i}.key/value` (float32 [batch, kv_heads, past, head_dim]), `num_logits_to_keep` "
          "(int64 scalar; logits of the last N positions, 0 = all); outputs `logits` [batch, N, vocab], "
          "`present.{i}.key/value`. Opset 17 plus onnxruntime's `com.microsoft` operators, so it runs in "
          "onnxruntime (Ghostline, transformers.js), not in other ONNX runtimes.")
    w("")
    w("## Data")
    w("")
    w(f"{s['train_files']:,} training files ({s['train_bytes'] / 1e6:.1f} MB, "
      f"{start['train_tokens_available'] / 1e6:.1f}M tokens) and {s['valid_files']} held-out files "
      f"({s['valid_bytes'] / 1e6:.1f} MB) from {len(used)} source packages:")
    w("")
    for (split, src), b in sorted(src_bytes.items()):
        w(f"- {split}: {src}: {b / 1e6:.1f} MB")
    w("")
    w("- Python: Debian's Python 3.11 standard library (PSF-2.0) and Debian `python3-*` packages whose "
      "`Files: *` licence in `/usr/share/doc/<package>/copyright` is permissive (BSD, MIT/Expat, Apache-2.0, "
      "PSF...); packages under GPL, LGPL or MPL were left out, and so were vendored folders.")
    w("- JavaScript/TypeScript: npm packages (and their dependencies) under MIT, ISC, BSD, Apache-2.0 and "
      "similar licences according to their `package.json`; sources preferred over build output.")
    synthetic = next((p for p in used if p["source"] == "synthetic"), None)
    if synthetic:
        w(f"- Synthetic: {synthetic['files']:,} short modules ({synthetic['bytes'] / 1e6:.1f} MB) of simple helper "
          "functions (`add`, `isEven`, `factorial`, `fibonacci`, a `Stack` class...) written from templates by "
          "`tools/model/synthetic.py` (ours, MIT): library code rarely has them, and the model did not tie a "
          "function's name to its body. The two prompts of the issue's check (`fibonacci`, `add`) are therefore "
          f"in-distribution; the ops {held_out_ops()} are left out of it, and "
          "their greedy samples below show what carries over.")
    w("- Dropped: minified, generated, data-like and vendored files, files over 200 KB, exact duplicates; "
      "at most 3 MB per npm package, 6-8 MB per Debian package.")
    w(f"- Held out for validation and the quality eval (whole packages): {', '.join(sorted(set(s['heldout_packages'])))}.")
    w("")
    w("| licence | packages | bytes |")
    w("|---|---|---|")
    for lic, (n, b) in sorted(by_lic.items(), key=lambda x: -x[1][1]):
        w(f"| {lic} | {n} | {b:,} |")
    w("")
    w("## Training")
    w("")
    fim_note = ("in half of the FIM samples the middle is a whole non-blank line from its start (30% of the time "
                "with 1-4 more lines), as Ghostline's prompt builder splits the prompt (in the first 409 steps the "
                "split was at a random column inside the line), in the other half a random span; prefix up to 1500 "
                "and suffix up to 500 characters")
    total_min = p_min + exp["minutes"]
    total_tok = p_tok + exp["tokens"]
    w(f"From scratch, **{total_min:.0f} minutes on 2 shared CPU cores** (PyTorch 1.13 bf16 autocast, OpenBLAS), "
      f"batches of {start['args']['batch']} x {start['args']['seq_len']} tokens: **{total_tok / 1e6:.1f}M tokens "
      f"seen** (about {total_tok / start['train_tokens_available']:.2f} epochs). AdamW (betas 0.9/0.95, weight "
      f"decay 0.1). FIM on {start['args']['fim_rate']:.0%} of the rows (PSM and SPM "
      f"{start['args']['spm_rate']:.0%}/{1 - start['args']['spm_rate']:.0%}): {fim_note}. Documents are packed "
      "and separated by `<|endoftext|>`.")
    w("")
    if len(phases) > 1:
        for i, ph in enumerate(phases):
            pa, d = ph["start"]["args"], ph["done"]
            if i == 0:
                w(f"1. `{ph['name']}`: {d['minutes']:.0f} minutes, {d['step']:,} steps, {d['tokens'] / 1e6:.1f}M "
                  f"tokens; peak learning rate {pa['lr']}, {pa['warmup_steps']} warmup steps, cosine decay to "
                  f"{pa['min_lr']} over the time budget.")
                continue
            source = (f"`{os.path.basename(pa['init_from'])}` of phase {i}" if pa["init_from"].endswith(".pt") else
                      f"the weights shipped after phase {i} (`model.safetensors`, bf16: the phase {i} checkpoints "
                      "were no longer on the machine)")
            w(f"{i + 1}. `{ph['name']}`: continued from {source} (weights only, `--init-from`) for "
              f"{d['minutes']:.0f} minutes, {d['step']:,} steps, {d['tokens'] / 1e6:.1f}M tokens, with a new "
              f"schedule (a warm restart: peak {pa['lr']}, {pa['warmup_steps']} warmup steps, cosine to "
              f"{pa['min_lr']}) and a new data order (seed {pa['seed']})"
              + (f", on a larger corpus ({ph['start']['train_bytes'] / 1e6:.1f} MB instead of "
                 f"{phases[i - 1]['start']['train_bytes'] / 1e6:.1f} MB)"
                 if ph["start"].get("train_bytes", 0) > phases[i - 1]["start"].get("train_bytes", 0) * 1.01 else "")
              + ".")
    else:
        w(f"{exp['step']:,} steps; peak learning rate {start['args']['lr']}, {start['args']['warmup_steps']} warmup "
          f"steps then cosine decay to {start['args']['min_lr']} over the time budget.")
    w("")
    w(f"Shipped checkpoint: `{exp['checkpoint']}` (lowest validation loss). Training code: `tools/model/` "
      f"(commit {commit}); logs: " + ", ".join(f"`tools/model/runs/{ph['name']}/train.log`" for ph in phases) + ".")
    w("")
    w("## Validation loss (held-out packages)")
    w("")
    w(f"From the training log at the shipped checkpoint ({(p_tok + best['tokens']) / 1e6:.1f}M tokens in all): "
      f"**{best['val_bpb']:.3f} bits per byte** ({best['val_loss']:.3f} nats/token at "
      f"{best['val_bytes_per_token']:.2f} bytes/token) on {start['args']['val_rows']} rows of "
      f"{start['args']['seq_len']} tokens of plain code; FIM middle (rest-of-line style samples, PSM): "
      f"{best['fim_middle_loss']:.3f} nats/token, {best['fim_middle_bpb']:.3f} bits/byte.")
    w("")
    for i, ph in enumerate(phases[1:], 1):
        before = phases[i - 1]["start"]["valid_tokens"]
        if ph["start"]["valid_tokens"] != before:
            w(f"Phase `{ph['name']}` was measured on a rebuilt copy of the held-out set "
              f"({ph['start']['valid_tokens']:,} tokens instead of {before:,}: the corpus was collected again "
              "from the same package versions), so its rows are not exactly comparable with the earlier ones; "
              "its first row re-measures its starting weights there.")
            w("")
    w("| phase | minutes | tokens | val bits/byte | FIM middle nats/token |")
    w("|---|---|---|---|---|")
    for i, ph in enumerate(phases):
        for e in ph["evals"]:
            w(f"| {ph['name']} | {off_min[i] + e['minutes']:.0f} | {(off_tok[i] + e['tokens']) / 1e6:.1f}M | "
              f"{e['val_bpb']:.3f} | {e['fim_middle_loss']:.3f} |")
    w("")
    w("## Quantization")
    w("")
    w("Weight-only, with `tools/model/quantize.py`: linear layers and the tied output projection as "
      "`com.microsoft` `MatMulNBits` (block 32, asymmetric zero points, `accuracy_level` 4, i.e. int8 "
      "activations: in onnxruntime-node 1.30 on CPU, 8-bit weights with level 0 decoded at 23-24 ms/token, with "
      "level 4 at 2.5-3.5 ms/token, for the same loss, on the torch.onnx graph), the embedding table as int8 rows. Measured in "
      f"onnxruntime-node on {q['eval_tokens']:,} held-out tokens (2 threads, rough speed on a busy 2-core "
      "machine):")
    w("")
    w("| variant | file bytes | nats/token | bits/byte | prefill 200 tokens | decode |")
    w("|---|---|---|---|---|---|")
    w(f"| PyTorch fp32 | | {q['torch_fp32']['nll']:.4f} | {q['torch_fp32']['bpb']:.4f} | | |")
    for n in ("fp32", "int8", "q4"):
        v = q[n]
        w(f"| ONNX {n} | {v['bytes']:,} | {v['nll']:.4f} | {v['bpb']:.4f} | {v['prefill_ms_200']:.1f} ms | "
          f"{v['decode_ms_per_token']:.2f} ms/token |")
    w("")
    w(f"Shipped: **{q['chosen']}** (`onnx/{onnx_files[0]}`): "
      + ("the fp32 file alone would not fit the 25 MB budget of the folder; " if q['fp32']['bytes'] > 20e6 else "")
      + f"int8 costs {q['int8']['nll'] - q['fp32']['nll']:+.4f} nats/token against fp32, int4 "
      f"{q['q4']['nll'] - q['fp32']['nll']:+.4f}.")
    w("")
    w(BEGIN)
    w(quality)
    w(END)
    w("")
    w("## Greedy samples (shipped ONNX file, temperature 0)")
    w("")
    for g in exp.get("greedy", []):
        w("```")
        w(g["prompt"].replace("<CURSOR>", "█") + "⟨" + g["completion"] + "⟩")
        w("```")
    w("")
    w("## Limitations")
    w("")
    w("Tiny model: often wrong beyond the next few tokens, no knowledge of libraries beyond what appears in the "
      "training packages, English-centric identifiers, Python/JS/TS only. Trained on 512-token windows. "
      "Licences of the training data are permissive, but completions may reproduce snippets of the training "
      "code; `licences.json` lists the sources.")
    with open(readme, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {readme}")


if __name__ == "__main__":
    main()
