"""`qdqreport confirm`: prove a finding's fix by a real re-quantization.

fix.py turns a finding's fix (or --exclude/--calib) into a FixSpec; quantizers.py recovers the
quantizer that made the bundle's QDQ model and its options, and runs it again with the fix
(ONNX Runtime's quantize_static here; ModelOpt when importable, otherwise the exact command);
run.py collects the new QDQ model on the bundle's own inputs and diffs it against the bundle.
The renderer never imports this package: it needs onnxruntime.
"""

from __future__ import annotations

from qdqreport.confirm.run import ConfirmOptions, ConfirmResult, confirm

__all__ = ["ConfirmOptions", "ConfirmResult", "confirm"]
