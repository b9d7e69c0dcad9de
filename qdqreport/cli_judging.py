"""`--output-kind NAME=KIND` and `--decision-threshold P`: what the user tells the report about the outputs.

collect records them in the bundle (settings.output_kinds, settings.decision_threshold); report and
validate take them too and win over what the bundle recorded (analysis/agreement.py resolves them).
"""

from __future__ import annotations

import argparse

from qdqreport.analysis.agreement import DEFAULT_THRESHOLD, JudgingOptions
from qdqreport.analysis.output_kinds import KINDS, parse_declarations

KIND_HELP = (f"NAME=KIND: what output NAME is, when the inferred kind is wrong; KIND is one of {', '.join(KINDS)} "
             "(repeatable). It decides how the output is judged: class scores by top-1, probabilities by threshold "
             "flips, maps by IoU, an image model's output images by PSNR, detector heads by detections kept, embeddings by cosine, state as internal")
THRESHOLD_HELP = (f"the probability at which the application decides (speech/no speech, a kept detection, a text "
                  f"pixel); threshold flips, map IoU and kept detections are measured there (default {DEFAULT_THRESHOLD:g})")


def _kind(text: str) -> str:
    try:
        parse_declarations([text])
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).replace("--output-kind ", "")) from None
    return text


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a probability strictly between 0 and 1, e.g. 0.5")
    return value


def add_judging(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output-kind", action="append", default=[], type=_kind, metavar="NAME=KIND", help=KIND_HELP)
    parser.add_argument("--decision-threshold", type=_threshold, default=None, metavar="P", help=THRESHOLD_HELP)


def judging_from(args: argparse.Namespace) -> JudgingOptions | None:
    """The options given on the command line; None when none were (the bundle's recorded ones then apply)."""
    kinds = parse_declarations(getattr(args, "output_kind", None) or [])
    threshold = getattr(args, "decision_threshold", None)
    if not kinds and threshold is None:
        return None
    return JudgingOptions(kinds, DEFAULT_THRESHOLD if threshold is None else threshold, threshold is not None)
