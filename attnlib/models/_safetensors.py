"""Read a ``.safetensors`` file with numpy alone (no ``safetensors`` package).

The format (Hugging Face's safetensors specification): 8 bytes, a little-endian
unsigned integer ``N``; ``N`` bytes of JSON, mapping each tensor's name to its
``dtype``, ``shape`` and ``data_offsets`` ``[begin, end)`` (bytes, counted from the end
of the header), plus an optional ``__metadata__`` entry; then the tensors' raw bytes,
little-endian, C order. Used by :mod:`attnlib.models.minilm` everywhere (the page's
Python has no ``safetensors`` package); ``tests/test_safetensors_numpy.py`` checks it
against the package on the model's file, tensor by tensor.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

#: safetensors' dtype names -> numpy dtypes (little-endian). BF16 and the FP8 types
#: have no numpy dtype and are refused.
DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U64": "<u8",
    "U32": "<u4",
    "U16": "<u2",
    "U8": "u1",
    "BOOL": "?",
}


def load_file(path) -> dict:
    """Every tensor of the ``.safetensors`` file at ``path``, by name.

    Returns a dict ``name -> numpy.ndarray`` (the file's dtype and shape; writable
    arrays sharing one buffer, the file's bytes read once).

    Raises
    ------
    ValueError
        If the file is not a valid safetensors file (header length beyond the file,
        header not JSON, a tensor's bytes outside the data or of the wrong length) or
        holds a dtype numpy lacks (BF16, FP8); the message names the file and the
        tensor.
    """
    path = Path(path)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if len(data) < 8:
        raise ValueError(f"{path}: {len(data)} bytes, too short for a safetensors file")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise ValueError(
            f"{path}: its header length ({n} bytes) exceeds the file ({len(data)} "
            "bytes): not a safetensors file"
        )
    try:
        header = json.loads(bytes(data[8 : 8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as why:
        raise ValueError(f"{path}: its header is not JSON ({why})") from None
    start, size = 8 + n, len(data) - 8 - n
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in DTYPES:
            raise ValueError(
                f"{path}: tensor {name!r} has dtype {info['dtype']}, which numpy "
                f"cannot hold (readable: {', '.join(DTYPES)})"
            )
        dtype = np.dtype(DTYPES[info["dtype"]])
        shape = tuple(int(d) for d in info["shape"])
        begin, end = (int(x) for x in info["data_offsets"])
        count = math.prod(shape)
        if not 0 <= begin <= end <= size or end - begin != count * dtype.itemsize:
            raise ValueError(
                f"{path}: tensor {name!r} ({info['dtype']}, shape {list(shape)}) has "
                f"bytes [{begin}, {end}) in a data section of {size} bytes"
            )
        tensors[name] = np.frombuffer(
            data, dtype=dtype, count=count, offset=start + begin
        ).reshape(shape)
    return tensors
