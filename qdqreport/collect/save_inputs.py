"""collect --save-inputs: the evaluation inputs stored in the bundle, keyed like stage outputs
(`<sample:06d>/<input name>`), plus a Polygraphy data-loader script that feeds them back in
sample order (`polygraphy run MODEL --data-loader-script inputs/qdqreport_inputs.py`)."""

from __future__ import annotations

import zipfile
from typing import Any, Mapping, Sequence

import numpy as np

from qdqreport.bundle.layout import output_key
from qdqreport.bundle.writer import BundleWriter
from qdqreport.collect.output_store import NpzStream

INPUTS_ARTIFACT = "eval_inputs"
LOADER_ARTIFACT = "polygraphy_data_loader"
INPUTS_PATH = "inputs/eval_inputs.npz"
# A module name no user package is likely to have: Polygraphy imports the script by its file name.
LOADER_PATH = "inputs/qdqreport_inputs.py"
# One statement: load_data() yields sample i's feed dict as iteration i.
LOADER_SCRIPT = (
    "import numpy as np, pathlib; _npz = np.load(pathlib.Path(__file__).with_name('eval_inputs.npz')); "
    "load_data = lambda: ({k.split('/', 1)[1]: _npz[k] for k in _npz.files if k.startswith(f'{i:06d}/')} "
    "for i in sorted({int(k.split('/', 1)[0]) for k in _npz.files}))\n"
)


def write_saved_inputs(writer: BundleWriter, manifest: dict[str, Any],
                       samples: Sequence[Mapping[str, np.ndarray]]) -> None:
    """Store every sample's feed and the loader script; declare both in manifest['artifacts'].

    Written sample by sample (compressed members, as numpy.savez_compressed writes them): the inputs are
    never all in memory (issue 12)."""
    stream = NpzStream(writer.path(INPUTS_PATH), zipfile.ZIP_DEFLATED)
    try:
        for index, feed in enumerate(samples):
            for name, value in feed.items():
                stream.add(output_key(index, name), value)
    finally:
        stream.close()
    manifest["artifacts"][INPUTS_ARTIFACT] = INPUTS_PATH
    manifest["artifacts"][LOADER_ARTIFACT] = writer.add_text(LOADER_PATH, LOADER_SCRIPT)
