"""`qdqreport diff`: what changed between two bundles of the same model (before and after a fix).

Layers: inputs.py, precision.py and accuracy.py compare plain bundle data (NumPy and the standard
library only); verdict.py judges them; model.py assembles them with the two bundles' findings and
engines into a frozen DiffModel; render.py turns a DiffModel into diff.html, diff.md and diff.json.
Only render.py imports jinja2 or matplotlib.
"""

from __future__ import annotations

from qdqreport.diff.model import DiffModel, build_diff
from qdqreport.diff.verdict import Tolerance

__all__ = ["DiffModel", "Tolerance", "build_diff"]
