"""The bundle's vocabulary: stage ids, comparison purposes and artefact paths, each listed once.

The collector writes these names, the schema checks them, and analysis, rules and the test
BundleBuilder read them from here. Imports nothing, so every layer may use it.
"""

from __future__ import annotations

# What each stage is: (runtime, precision). Unknown stage ids are allowed by the schema.
STAGE_KINDS = {
    "reference": ("framework", "fp32"),
    "ort_fp32": ("onnxruntime", "fp32"),
    "ort_qdq": ("onnxruntime", "qdq"),
    "trt_fp16": ("tensorrt", "fp16"),
    "trt_int8": ("tensorrt", "int8"),
    "trt_int8_noobey": ("tensorrt", "int8"),  # TensorRT 10: trt_int8's build without OBEY_PRECISION_CONSTRAINTS
    "ort_qdq_fp32": ("onnxruntime", "qdq-fp32-float"),  # control: ort_qdq's model with its FP16 float part in FP32
}

# What a divergence between two stages means: a comparison's `purpose` is one of these.
PURPOSES = ("export", "quantization", "deployment", "fp16", "other")

# Which stage pairs are compared, and their purpose.
COMPARISON_PLAN = (
    ("reference", "ort_fp32", "export"),
    ("ort_fp32", "ort_qdq", "quantization"),
    ("ort_fp32", "trt_fp16", "fp16"),
    ("ort_qdq", "trt_int8", "deployment"),
)

# Bundle-level artefacts (manifest `artifacts`): kind -> path inside the bundle.
ARTIFACT_PATHS = {
    "precision_summary": "quant/precision_summary.json",
    "modelopt_log": "quant/modelopt_log.json",
    "eval_stats": "inputs/eval_stats.json",
    "calib_stats": "inputs/calib_stats.json",
    "range_use": "inputs/range_use.json",
    "activation_ranges": "quant/activation_ranges.json",  # bounded range-use pass: collect/activation_ranges.py
    "layers_summary": "layers/summary.json",  # per-layer pass (collect --per-layer)
    "whatif_summary": "layers/whatif.json",  # what-if search (collect --per-layer, --whatif-budget > 0)
    "fp16_check": "quant/fp16_check.json",  # FP16 check (QDQ float part in FP16): collect/fp16_check.py
    "fp16_ranges": "quant/fp16_ranges.csv",
}
# layers/whatif.json: the name under which a variant's --postprocess decode is judged beside its outputs ("outputs",
# and "output" when the decode judges worst; bundles since 2026-11-27, session 31).
WHATIF_TASK_OUTPUT = "decoded task results"
