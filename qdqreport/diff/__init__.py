"""`qdqreport diff`: what changed between two bundles of the same model (before and after a fix).

Layers: inputs.py, precision.py and accuracy.py compare plain bundle data (NumPy and the standard
library only); model.py assembles them with the two bundles' findings into a frozen DiffModel and
its verdict; render.py turns a DiffModel into diff.html, diff.md and diff.json. Only render.py
imports jinja2 or matplotlib.
"""

from __future__ import annotations

from qdqreport.diff.model import DiffModel, Tolerance, build_diff

__all__ = ["DiffModel", "Tolerance", "build_diff"]
