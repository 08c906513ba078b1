"""The safetensors format (u64 LE header size, JSON header padded to 8 bytes, raw LE data), numpy only: the one
reader of the package (lazy, memory-mapped, one file or a sharded set) and the header both writers use."""
from __future__ import annotations

import json
import os
import struct

import numpy as np

ITEM_SIZE = {"BF16": 2, "F16": 2, "F32": 4}  # what the reader converts to float32


def encode_header(tensors, metadata: dict | None = None) -> bytes:
    """The bytes before the data: tensors = [(name, dtype, shape, nbytes)] in file order."""
    header: dict = {}
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    offset = 0
    for name, dtype, shape, nbytes in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * ((8 - len(hb) % 8) % 8)
    return struct.pack("<Q", len(hb)) + hb


class SafeTensors:
    """Tensors of a checkpoint (a .safetensors file, or the .index.json of a sharded set), read lazily through
    memory maps as float32."""

    def __init__(self, path: str) -> None:
        if path.endswith(".index.json"):
            index = json.load(open(path))
            files = sorted(set(index["weight_map"].values()))
            paths = [os.path.join(os.path.dirname(path), f) for f in files]
        else:
            paths = [path]
        self.entries: dict[str, tuple[np.memmap, dict, int, str]] = {}
        for p in paths:
            with open(p, "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                header = json.loads(f.read(n))
            mm = np.memmap(p, dtype=np.uint8, mode="r")
            for name, info in header.items():
                if name != "__metadata__":
                    self.entries[name] = (mm, info, 8 + n, p)

    def __contains__(self, name: str) -> bool:
        return name in self.entries

    def __iter__(self):
        return iter(self.entries)

    def shape(self, name: str) -> list[int]:
        return list(self.entries[name][1]["shape"])

    def rows(self, name: str, r0: int, r1: int) -> np.ndarray:
        """Rows r0..r1 of a tensor (its first dimension), as float32 [r1 - r0, ...]."""
        mm, info, base, path = self.entries[name]
        shape = info["shape"]
        dt = info["dtype"]
        size = ITEM_SIZE.get(dt)
        if size is None:
            raise SystemExit(f"{path}: tensor {name} has dtype {dt}; only BF16, F16 and F32 are supported")
        row = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        a, b = info["data_offsets"]
        if b - a != size * int(np.prod(shape)):
            raise SystemExit(f"{path}: tensor {name}: data_offsets {a}..{b} disagree with shape {shape} {dt}")
        raw = mm[base + a + r0 * row * size: base + a + r1 * row * size]
        if dt == "BF16":  # the top half of a float32
            out = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
        elif dt == "F16":
            out = raw.view("<f2").astype(np.float32)
        else:
            out = raw.view("<f4").astype(np.float32)
        return out.reshape([r1 - r0] + list(shape[1:]))

    def all(self, name: str) -> np.ndarray:
        shape = self.shape(name)
        return self.rows(name, 0, shape[0]) if shape else self.rows(name, 0, 1).reshape([])
