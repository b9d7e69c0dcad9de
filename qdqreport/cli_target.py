"""`--target tensorrt|onnxruntime`: the one option collect, report, validate and diff share (analysis/target.py decides)."""

from __future__ import annotations

import argparse

from qdqreport.analysis.target import TARGETS

REPORT_HELP = ("the runtime you deploy the QDQ model on: tensorrt or onnxruntime (default: the target the bundle "
               "recorded, else tensorrt). What only TensorRT rejects (zero-points, UINT8, int32 bias) is an error for "
               "tensorrt and an info note for onnxruntime, shown apart from the root causes")
COLLECT_HELP = ("the runtime you deploy the QDQ model on: tensorrt (default) or onnxruntime; recorded in the bundle "
                "(settings.target) so report judges TensorRT-only Q/DQ defects for that runtime")


def add_target(parser: argparse.ArgumentParser, collect: bool = False) -> None:
    parser.add_argument("--target", choices=TARGETS, default="tensorrt" if collect else None,
                        help=COLLECT_HELP if collect else REPORT_HELP)
