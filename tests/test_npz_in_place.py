"""The bundle's .npz reader reads stored members where they lie (bundle/decode.py): the arrays must be exactly what
NumPy's own np.load gives, in every layout a bundle may hold, and a member that lies about its size is one line."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from qdqreport.bundle.decode import load_npz
from qdqreport.errors import BundleError

ARRAYS = {
    "fortran": np.asfortranarray(np.arange(24.0).reshape(2, 3, 4)),
    "big_endian": np.arange(5, dtype=">i4"),
    "text": np.array(["ab", "c"]),
    "scalar": np.array(3.5, dtype=np.float32),
    "flags": np.array([True, False]),
    "empty": np.zeros((0, 3), dtype=np.float16),
    "zero_size_dtype": np.zeros(3, dtype="V0"),
    "000001/logits": np.linspace(-1, 1, 10, dtype=np.float32).reshape(1, 10),
}


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_every_layout_reads_as_numpy_reads_it(save):
    buffer = io.BytesIO()
    save(buffer, **ARRAYS)
    data = buffer.getvalue()
    ours, numpys = load_npz(data, "x.npz", "recollect"), np.load(io.BytesIO(data))
    for key, expected in ARRAYS.items():
        got, want = ours[key], numpys[key]
        assert (got.dtype, got.shape) == (want.dtype, want.shape) == (expected.dtype, expected.shape), key
        assert np.array_equal(got, want) and got.flags.writeable, key
        assert got.flags.f_contiguous == want.flags.f_contiguous, key


def test_many_members_sharing_a_header_are_each_their_own_array():
    buffer = io.BytesIO()
    np.savez(buffer, **{f"{i:06d}/p": np.full((1, 1), i, dtype=np.float32) for i in range(300)})
    arrays = load_npz(buffer.getvalue(), "x.npz", "recollect")
    assert [float(arrays[f"{i:06d}/p"][0, 0]) for i in range(300)] == list(range(300))
    arrays["000000/p"][0, 0] = -1  # a copy: changing one changes no other
    assert float(arrays["000001/p"][0, 0]) == 1


def test_a_stored_member_shorter_than_its_header_declares_is_one_line():
    header = io.BytesIO()
    np.lib.format.write_array(header, np.zeros(1000, dtype=np.float32))
    short = header.getvalue()[:-400]  # the header still declares 1,000 values
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("a.npy", short)
    with pytest.raises(BundleError) as caught:
        load_npz(buffer.getvalue(), "stages/ort_qdq/outputs.npz", "recollect")
    message = str(caught.value)
    assert "\n" not in message and "stages/ort_qdq/outputs.npz" in message and "recollect" in message
