"""Give every corpus case the deployment target its QDQ model was made for, by one rule read from its bundle.

A QDQ model that holds int32 bias DequantizeLinear nodes was made by onnxruntime's `quantize_static` with its
default QuantizeBias on: ONNX Runtime's own recipe, which it runs faithfully and TensorRT's parser rejects
(onnx-tensorrt#850). Such a case is judged as its maker would deploy it, `--target onnxruntime`, whatever its
cause, unless the cause *is* what TensorRT will not honour (cause 5): those cases exist to be judged for TensorRT.
Cases without int32 bias keep the target their script gave them (ModelOpt's models and the QuantizeBias=False
`*_trt_nobias` controls are made for TensorRT; ORT-made models with no bias to quantize judge the same either way).

Until 2026-11-24 (session 21) only the ORT-made *healthy* controls carried target onnxruntime; the faulty cases
made by the same recipe were judged for TensorRT, where the parser error is a second, real fault next to the
labelled cause (docs/CORPUS.md says how the scores moved with this rule).

    python scripts/label_targets.py            # rewrite corpus/labels.json; prints how many targets changed
    python scripts/label_targets.py --check    # exit 1 when a label breaks the rule
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
TENSORRT_CAUSE = 5  # "Q/DQ semantics TensorRT won't honour"


def has_int32_bias(case_dir: Path) -> bool:
    """True when the bundle's QDQ model lists an int32 DequantizeLinear (a quantized bias)."""
    path = case_dir / "quant" / "precision_summary.json"
    if not path.exists():
        return False
    entries = json.loads(path.read_text(encoding="utf-8")).get("qdq") or []
    return any(entry.get("dtype") == "int32" for entry in entries)


def recipe_target(case_dir: Path, label: dict) -> str | None:
    """The target the rule sets, or None when the rule leaves the label's own target."""
    if label["cause"]["number"] == TENSORRT_CAUSE:
        return "tensorrt"
    return "onnxruntime" if has_int32_bias(case_dir) else None


def apply(labels: dict, corpus: Path = CORPUS) -> int:
    """Set each label's target by the rule, in place; return how many changed."""
    changed = 0
    for case, label in labels.items():
        target = recipe_target(corpus / case, label)
        if target is None or label.get("target", "tensorrt") == target:
            continue
        if target == "tensorrt":
            label.pop("target", None)
        else:
            label["target"] = target
        changed += 1
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a label breaks the rule")
    args = parser.parse_args()
    path = CORPUS / "labels.json"
    labels = json.loads(path.read_text(encoding="utf-8"))
    changed = apply(labels)
    if args.check:
        print(f"{changed} label(s) break the target rule" if changed else "every label follows the target rule")
        return 1 if changed else 0
    path.write_text(json.dumps(labels, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{changed} target(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
