"""attnlib reads ``.safetensors`` files with numpy alone, as the ``safetensors``
package does: the model's file tensor by tensor, and small files of every dtype."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from attnlib.models import minilm
from attnlib.models._safetensors import load_file

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def test_every_tensor_of_the_model_equals_what_safetensors_loads():
    path = minilm.model_dir() / "model.safetensors"
    ours, theirs = load_file(path), safetensors_numpy.load_file(str(path))
    assert sorted(ours) == sorted(theirs) and len(ours) > 100
    for name, want in theirs.items():
        got = ours[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert np.array_equal(got, want), name  # bit for bit (no NaN in the file)


@pytest.mark.parametrize(
    "dtype", ["<f8", "<f4", "<f2", "<i8", "<i4", "<i2", "i1", "<u4", "u1", "?"]
)
def test_each_dtype_round_trips_through_the_package(tmp_path, dtype):
    rng = np.random.default_rng(38)
    tensors = {
        "a": (rng.standard_normal((3, 4)) * 100).astype(dtype),
        "b": (rng.standard_normal(5) * 100).astype(dtype),
        "empty": np.zeros((0, 2), dtype=dtype),
    }
    path = tmp_path / "t.safetensors"
    safetensors_numpy.save_file(tensors, str(path), metadata={"format": "np"})
    got = load_file(path)
    assert sorted(got) == sorted(tensors)
    for name, want in tensors.items():
        assert got[name].dtype == want.dtype and np.array_equal(got[name], want)


def _file(tmp_path, header: bytes, data: bytes = b"", length=None):
    path = tmp_path / "bad.safetensors"
    n = len(header) if length is None else length
    path.write_bytes(struct.pack("<Q", n) + header + data)
    return path


def test_broken_files_raise_value_errors_naming_the_cause(tmp_path):
    with pytest.raises(ValueError, match="too short"):
        load_file(_short(tmp_path))
    with pytest.raises(ValueError, match="exceeds the file"):
        load_file(_file(tmp_path, b"{}", length=1000))
    with pytest.raises(ValueError, match="not JSON"):
        load_file(_file(tmp_path, b"{nope"))
    bf16 = {"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}
    with pytest.raises(ValueError, match="'w' has dtype BF16"):
        load_file(_file(tmp_path, json.dumps(bf16).encode(), b"\0" * 4))
    short = {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    with pytest.raises(ValueError, match="'w' .* data section of 4 bytes"):
        load_file(_file(tmp_path, json.dumps(short).encode(), b"\0" * 4))


def _short(tmp_path):
    path = tmp_path / "short.safetensors"
    path.write_bytes(b"\x01\x02")
    return path
