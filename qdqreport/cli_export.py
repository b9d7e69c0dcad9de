"""The `qdqreport export` subcommand (kept out of cli.py, which only registers it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DESCRIPTION = ("Write a bundle's evidence in formats other tools open: --model-explorer DIR writes per-node "
               "overlays (node data JSON) for Google's Model Explorer on the FP32 and QDQ graphs; --polygraphy DIR "
               "writes each stage's outputs as Polygraphy RunResults and the saved inputs (collect --save-inputs) "
               "as Polygraphy input JSON, for `polygraphy run --load-inputs/--load-outputs` on a GPU machine. "
               "Each folder is written atomically. See docs/export.md.")


def add_export(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("export", help="Model Explorer overlays and Polygraphy replay files from a bundle",
                                 description=DESCRIPTION)
    parser.add_argument("bundle", help="bundle folder or .zip")
    parser.add_argument("--model-explorer", metavar="DIR",
                        help="folder for <fp32|qdq>.<metric>.json node data (needs the models and, for error values, "
                             "a bundle collected with --per-layer)")
    parser.add_argument("--polygraphy", metavar="DIR", help="folder for <stage>.json RunResults and inputs.json")
    parser.add_argument("--fp32", metavar="MODEL.onnx", help="the FP32 model (default: the path the bundle recorded)")
    parser.add_argument("--qdq", metavar="MODEL.onnx", help="the QDQ model (default: the path the bundle recorded)")
    parser.add_argument("--force", action="store_true", help="replace an earlier export (a folder of .json files only; any other folder is refused)")
    parser.set_defaults(handler=_export)


def _export(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.bundle.reader import Bundle
    from qdqreport.errors import InputError

    if not args.model_explorer and not args.polygraphy:
        raise InputError("export: nothing to write; pass --model-explorer DIR and/or --polygraphy DIR")
    bundle = Bundle(args.bundle)
    written: list[Path] = []
    if args.model_explorer:
        from qdqreport.export.model_explorer import export_model_explorer

        models = {"fp32": Path(args.fp32) if args.fp32 else None, "qdq": Path(args.qdq) if args.qdq else None}
        written += export_model_explorer(bundle, Path(args.model_explorer), models, force=args.force)
    if args.polygraphy:
        from qdqreport.export.polygraphy import INPUTS_FILE, export_polygraphy

        files = export_polygraphy(bundle, Path(args.polygraphy), force=args.force)
        if not any(f.name == INPUTS_FILE for f in files):
            print(f"qdqreport: note: {args.bundle} holds no inputs; re-collect with --save-inputs to get "
                  f"{INPUTS_FILE}", file=sys.stderr)
        written += files
    for path in written:
        print(path)
    return 0
