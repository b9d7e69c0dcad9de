"""Regenerate the demo's gold files: tests/gold/report.md and tests/gold/findings.json.

    python scripts/update_gold.py          # after an intended change to the report; review the diff
    python scripts/update_gold.py --as-no-vnni   # on a VNNI machine: tests/gold/ as a CPU without VNNI writes it

The demo's S8S8 model gets the saturation check's control only on an x86-64 CPU without VNNI, so each kind of CPU has
its gold: tests/gold/ (no VNNI, an AMD EPYC with AVX2) and tests/gold/vnni/ (an Intel Xeon with AVX512-VNNI); this
script writes the one of the CPU it runs on (gold_dir()); on a VNNI machine --as-no-vnni writes tests/gold/ too
(as_no_vnni: the saturation check takes the CPU for one without VNNI).

tests/test_gold.py runs the same steps and compares its result with these files byte for byte.

The demo (`qdqreport demo`) is really collected (real ONNX Runtime runs of the shipped models);
only what differs between two runs of the same code on the same data is normalised in a copy of
the bundle's manifest before the report is rendered: the time it was written, the stage timings,
the host, the tool versions, the command line (its output folder is a temporary one) and the
checkout's folder in the recorded paths (written as `qdqreport/demo/...`, relative to the
repository root, where the fix commands then run). Everything else, every number included, is
what the collector measured.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "tests" / "gold"
GOLD_FILES = ("report.md", "findings.json")
CREATED_AT = "2026-01-01T00:00:00Z"
TOOLS = {"numpy": "N", "onnx": "N", "onnxruntime": "N", "onnxruntime_providers": ["CPUExecutionProvider"],
         "polygraphy": "N", "python": "N", "tensorrt": None}
HOST = {"cpu": "CPU", "cpu_count": 1, "gpu": None, "machine": "x86_64", "platform": "Linux", "python_implementation": "cpython"}


def build_gold(work: Path) -> dict[str, bytes]:
    """Collect the demo into *work*, normalise its manifest, render; the gold files' bytes by name."""
    from qdqreport.cli import DEMO_DIR, main
    from qdqreport.pipeline import render_report

    main(["demo", "-o", str(work / "demo"), "--quiet"])
    bundle = work / "demo" / "bundle"
    normalise_manifest(bundle / "manifest.json", str(DEMO_DIR.parent.parent))
    render_report(bundle, work / "gold")
    return {name: (work / "gold" / name).read_bytes() for name in GOLD_FILES}


def normalise_manifest(path: Path, checkout: str) -> None:
    """Rewrite the run-specific fields of the bundle whose manifest is *path* (see the module docstring).

    The checkout's folder also appears in data files (input statistics, the copied ModelOpt log):
    those are rewritten too and their sha256 and size updated, so the bundle still verifies."""
    prefix = checkout.rstrip("/") + "/"
    manifest = json.loads(path.read_text(encoding="utf-8").replace(prefix, ""))
    for name, entry in manifest["files"].items():
        data_file = path.parent / name
        if data_file.suffix in (".json", ".log", ".txt", ".csv") and prefix in data_file.read_text(encoding="utf-8"):
            data = data_file.read_text(encoding="utf-8").replace(prefix, "").encode("utf-8")
            data_file.write_bytes(data)
            entry.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    manifest["created_at"] = CREATED_AT
    manifest["collector"]["argv"] = ["qdqreport", "demo"]
    manifest["tools"], manifest["host"] = dict(TOOLS), dict(HOST)
    for stage in manifest["stages"]:
        if stage.get("seconds") is not None:
            stage["seconds"] = 1.0
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def gold_dir() -> Path | None:
    """The gold folder of this CPU: tests/gold/ without VNNI, tests/gold/vnni/ with it; None where unknown (not x86)."""
    from qdqreport.collect.saturation_check import cpu_vnni

    vnni = cpu_vnni()["vnni"]
    return None if vnni is None else GOLD / "vnni" if vnni else GOLD


# The CPU the saturation check sees with --as-no-vnni: an AVX2 x86-64 without VNNI (the AMD EPYC of tests/gold/).
NO_VNNI = {"machine": "x86_64", "vnni": False, "vnni_flags": [], "avx2": True, "avx512f": False,
           "flags_source": "/proc/cpuinfo"}


def as_no_vnni() -> None:
    """Make the collector's saturation check take this CPU for one without VNNI, so that a VNNI machine writes
    tests/gold/ too. The demo's fused QDQ outputs are the same on both kinds (both golds show 25 of 50 top-1 changes
    at 4.1 dB): only the check's decision to run the unfused control differs, and that control computes in float.
    Checked on 2026-11-28 on an AVX512-VNNI EPYC: at 698a5ae it wrote tests/gold/report.md byte for byte and
    findings.json within test_gold's float tolerance."""
    import qdqreport.collect.pipeline as pipeline

    pipeline.cpu_vnni = lambda: dict(NO_VNNI)


def main() -> int:
    no_vnni = "--as-no-vnni" in sys.argv[1:]
    if no_vnni:
        as_no_vnni()
    folder = GOLD if no_vnni else gold_dir()
    if folder is None:
        print("this CPU's VNNI support is unknown (not x86-64): no gold folder for it", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="qdqreport-gold-") as tmp:
        files = build_gold(Path(tmp))
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        target = folder / name
        changed = not target.is_file() or target.read_bytes() != data
        staged = target.with_name(target.name + ".tmp")
        staged.write_bytes(data)
        staged.replace(target)  # atomic: a reader never sees half a gold file
        print(f"{target.relative_to(ROOT)}: {'updated' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
