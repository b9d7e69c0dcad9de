"""The `qdqreport diff` subcommand and `qdqreport report --config-card` (kept out of cli.py, which only registers them)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from qdqreport.cli_target import add_target
from qdqreport.errors import QdqReportError

DESCRIPTION = ("Compare two bundles of the same model, BEFORE and AFTER a change (a fix, a new calibration set, "
               "another exclusion list): what changed in the inputs, the precision of every node, the accuracy "
               "of every stage pair, the findings and the TensorRT engines, with one verdict line. Writes "
               "diff.html, diff.md (fits a GitHub comment) and diff.json together. Exit codes: 0 written, "
               "1 AFTER regressed and --fail-on-regression was given, 2 bad input.")


def add_diff(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("diff", help="compare two bundles (before and after a fix): diff.html, diff.md, diff.json",
                                 description=DESCRIPTION)
    parser.add_argument("before", help="the BEFORE bundle (folder or .zip)")
    parser.add_argument("after", help="the AFTER bundle (folder or .zip)")
    parser.add_argument("-o", "--output", required=True, help="folder for diff.html, diff.md and diff.json")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when AFTER is worse than BEFORE beyond the tolerances (for CI)")
    parser.add_argument("--top1-tolerance", type=float, default=0.01, metavar="SHARE",
                        help="a drop in top-1, decoded-decision agreement or another share of decisions that judged an "
                             "output (threshold decisions, map IoU, detections) larger than this is a regression "
                             "(default 0.01: one percentage point); a worse judged level always is")
    parser.add_argument("--cosine-tolerance", type=float, default=0.001, metavar="COSINE",
                        help="a drop in median output cosine larger than this is a regression (default 0.001)")
    parser.add_argument("--force", action="store_true",
                        help="compare bundles whose FP32 models differ (refused by default)")
    add_target(parser)
    parser.set_defaults(handler=_diff)


def _diff(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.diff import Tolerance, build_diff
    from qdqreport.diff.render import write_diff

    for flag, value in (("--top1-tolerance", args.top1_tolerance), ("--cosine-tolerance", args.cosine_tolerance)):
        if not 0.0 <= value < 1.0:
            raise QdqReportError(f"{flag} {value}: give a number in [0, 1), e.g. {flag} 0.01")
    model = build_diff(args.before, args.after, force=args.force,
                       tolerance=Tolerance(top1=args.top1_tolerance, cosine=args.cosine_tolerance), target=args.target)
    outcome = write_diff(model, args.output)
    for path in outcome.paths:
        print(path)
    print(model.verdict.text)
    return 1 if args.fail_on_regression and outcome.regressed else 0


def add_config_card(commands: argparse._SubParsersAction) -> None:
    """Give `qdqreport report` a --config-card flag: config_card.md beside the report, from the same bundle."""
    report = commands.choices["report"]
    report.add_argument("--config-card", action="store_true",
                        help="also write config_card.md: the working configuration (models, quantization "
                             "command, exclusions, calibration set, engine build, tool versions, accuracy vs "
                             "FP32) as Markdown to commit next to the model")
    report.set_defaults(handler=_with_card(report.get_default("handler")))


def _with_card(render: Callable[[argparse.Namespace, list[str]], int]) -> Callable[[argparse.Namespace, list[str]], int]:
    def handler(args: argparse.Namespace, argv: list[str]) -> int:
        if not args.config_card:
            return render(args, argv)
        from qdqreport.pipeline import write_atomically
        from qdqreport.render.config_card import CARD_FILE, card_text

        # Before the report, so a bad bundle leaves nothing written; redacted like the report when asked.
        text = card_text(args.bundle, args.output, redact=args.redact)
        code = render(args, argv)
        print(write_atomically(Path(args.output), {CARD_FILE: text})[CARD_FILE])
        return code
    return handler
