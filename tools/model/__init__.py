"""Ghostline's Python model tooling: corpus, tokenizer, training, ONNX/GGUF export, quantization, test fixtures,
eval set and model card (README.md here says which script does what).

A package so that scripts share modules: run each as a module from the repository root,
`/usr/bin/python3 -m tools.model.NAME ...`; they import each other package-relatively (`from . import bpe`).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def dir_size(folder: str) -> int:
    """Bytes of all files under folder."""
    return sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(folder) for f in fs)


def load_jsonl(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
