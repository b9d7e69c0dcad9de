"""The `qdqreport import-trt` subcommand (kept out of cli.py, which only registers it)."""

from __future__ import annotations

import argparse

DESCRIPTION = ("Add TensorRT artefacts made elsewhere to a bundle: trtexec --exportLayerInfo / --exportProfile JSON, "
               "the build log, build settings, and engine outputs from `polygraphy run --trt --save-outputs`. "
               "Every file is checked first; the bundle is rewritten atomically (in place unless -o). "
               "The bundle is untrusted input: only files its manifest lists under safe relative names are "
               "copied, each re-verified, and nothing is written outside the new bundle (SECURITY.md).")


def add_import_trt(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("import-trt", help="add TensorRT layer info, profile, logs or outputs to a bundle",
                                 description=DESCRIPTION)
    parser.add_argument("bundle", help="bundle folder or .zip (with --new: the bundle to create)")
    parser.add_argument("--stage", required=True, choices=("trt_fp16", "trt_int8"),
                        help="trt_fp16: the engine of the FP32 model; trt_int8: the engine of the QDQ model")
    parser.add_argument("--layer-info", metavar="F", help="trtexec --exportLayerInfo JSON (--profilingVerbosity=detailed)")
    parser.add_argument("--profile", metavar="F", help="trtexec --exportProfile JSON (per-layer times)")
    parser.add_argument("--outputs", metavar="F|DIR",
                        help="Polygraphy RunResults of a TensorRT runner (file, or per-iteration folder); "
                             "iteration i must be the bundle's sample i")
    parser.add_argument("--build-log", metavar="F", help="trtexec / TensorRT build log (console output)")
    parser.add_argument("--build-settings", metavar="F",
                        help="TREx <engine>.build.metadata.json or a qdqreport build_settings.json")
    parser.add_argument("-o", "--output", help="write the result here instead of rewriting BUNDLE in place")
    parser.add_argument("--new", action="store_true",
                        help="start a new bundle holding only TensorRT artefacts (no models, no ONNX Runtime stages)")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing bundle at -o (or --new); anything that is not a qdqreport bundle "
                             "is refused, never deleted")
    parser.set_defaults(handler=_import_trt)


def _import_trt(args: argparse.Namespace, argv: list[str]) -> int:
    from qdqreport.collect.trt_import import ImportOptions, import_trt

    options = ImportOptions(bundle=args.bundle, stage=args.stage, layer_info=args.layer_info, profile=args.profile,
                            outputs=args.outputs, build_log=args.build_log, build_settings=args.build_settings,
                            output=args.output, new=args.new, force=args.force, argv=list(argv))
    print(import_trt(options))
    return 0
