"""A bundle with many outputs and per-layer rows, built from a real collected bundle by replicating its rows.

Used by tests/fuzz/test_bounded_report.py (what the report says and how big it gets) and
benchmarks (how long it takes). Every replicated row keeps its real metric values; only the
output and tensor names are made unique, and the manifest is re-hashed.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def _csv(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode("utf-8")


def replicate_outputs(rows: list[list[str]], outputs: int) -> list[list[str]]:
    """A samples/slices table whose first output is repeated as *outputs* outputs named out_0000, out_0001, ..."""
    header, body = rows[0], rows[1:]
    first = body[0][0]
    base = [r for r in body if r[0] == first]
    return [header] + [[f"out_{i:04d}", *r[1:]] for i in range(outputs) for r in base]


def replicate_layers(rows: list[list[str]], count: int) -> list[list[str]]:
    """A layers table with *count* rows: the real rows repeated, tensor names and graph indices made unique."""
    header, body = rows[0], rows[1:]
    tensor, index = header.index("tensor"), header.index("index")
    out = [header]
    for i in range(count):
        row = list(body[i % len(body)])
        row[tensor] = f"{row[tensor]}#{i // len(body)}" if i >= len(body) else row[tensor]
        row[index] = str(int(row[index]) + 10_000 * (i // len(body)))
        out.append(row)
    return out


def build_big_bundle(source: Path, target: Path, outputs: int = 1000, layers: int = 5000) -> Path:
    """Copy the real bundle *source* to *target* with *outputs* outputs per comparison and *layers* layer rows."""
    files = {p.relative_to(source).as_posix(): p.read_bytes() for p in source.rglob("*") if p.is_file()}
    manifest = json.loads(files.pop("manifest.json"))
    for comparison in manifest["comparisons"]:
        for kind in ("samples", "slices"):
            path = comparison["tables"].get(kind)
            if path:
                files[path] = _csv(replicate_outputs(_rows(files[path]), outputs))
        if comparison["tables"].get("layers"):
            path = comparison["tables"]["layers"]
            files[path] = _csv(replicate_layers(_rows(files[path]), layers))
        comparison["class_outputs"] = [f"out_{i:04d}" for i in range(outputs)] if comparison["class_outputs"] else []
    for name, data in files.items():
        manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data)
    (target / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return target
