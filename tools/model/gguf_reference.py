"""llama.cpp's own reading of a GGUF file, as the reference for Ghostline's (src/converter/gguf/): every tensor
dequantized to float32 by gguf-py (llama.cpp's Python package: gguf/quants.py, numpy only), written as raw
little-endian float32 files plus an index, so a test compares Ghostline's values with llama.cpp's one by one.

usage: /usr/bin/python3 -m tools.model.gguf_reference --gguf-py LLAMA_CPP_SOURCE/gguf-py FILE.gguf OUT_DIR
  OUT_DIR/index.json: [{"name", "type", "shape" (ggml order), "file"}]; OUT_DIR/<n>.f32: the values in storage order
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf-py", required=True, help="the gguf-py folder of a llama.cpp source tree")
    ap.add_argument("gguf")
    ap.add_argument("out")
    a = ap.parse_args()
    sys.path.insert(0, a.gguf_py)
    from gguf import GGUFReader  # noqa: E402  (llama.cpp's package, from the source tree named above)
    from gguf.quants import dequantize  # noqa: E402

    os.makedirs(a.out, exist_ok=True)
    index = []
    for i, t in enumerate(GGUFReader(a.gguf).tensors):
        values = np.asarray(dequantize(t.data, t.tensor_type), dtype="<f4").reshape(-1)
        name = f"{i}.f32"
        values.tofile(os.path.join(a.out, name))
        index.append({"name": t.name, "type": t.tensor_type.name, "shape": [int(d) for d in t.shape], "file": name})
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump(index, f)
    print(f"{len(index)} tensors of {a.gguf} dequantized into {a.out}")


if __name__ == "__main__":
    main()
