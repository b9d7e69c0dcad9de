"""Compare two bundles file by file: is a speed change's bundle the same as before it?

    python benchmarks/compare_bundles.py BEFORE AFTER [BEFORE2 AFTER2 ...]

Every file of both folders must exist on both sides. JSON files are compared as parsed values
without the fields that differ from one run to the next: `seconds` (wall times), `created_at`,
`argv` (it names -o), the manifest's `collector` and `tools` (versions), and the manifest's `files`
entries (hashes and sizes) of the JSON files holding such fields; everything else, floats
included, must be equal. `.npz` files must be byte-identical or hold the same arrays bit for bit
(dtype, shape and bytes). Every other file (CSV, logs, text) must be byte-identical. Exits 1 and
names the first differences when a pair differs. A `.zip` bundle is extracted first.
"""

from __future__ import annotations

import json
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

VOLATILE = {"seconds", "created_at", "argv"}
VOLATILE_MANIFEST = {"collector", "tools"}


def _clean(value, top: bool = False):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()
                if k not in VOLATILE and not (top and k in VOLATILE_MANIFEST)}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _has_volatile(value) -> bool:
    if isinstance(value, dict):
        return any(k in VOLATILE or _has_volatile(v) for k, v in value.items())
    return isinstance(value, list) and any(_has_volatile(v) for v in value)


def compare(before: Path, after: Path) -> list[str]:
    left = {p.relative_to(before).as_posix() for p in before.rglob("*") if p.is_file()}
    right = {p.relative_to(after).as_posix() for p in after.rglob("*") if p.is_file()}
    problems = [f"only in {before}: {name}" for name in sorted(left - right)]
    problems += [f"only in {after}: {name}" for name in sorted(right - left)]
    volatile_files = {name for name in left & right if name.endswith(".json")
                      and _has_volatile(json.loads((before / name).read_text()))}
    for name in sorted(left & right):
        a, b = before / name, after / name
        if name.endswith(".json"):
            x, y = json.loads(a.read_text()), json.loads(b.read_text())
            top = name == "manifest.json"
            if top:
                for side in (x, y):
                    side["files"] = {k: v for k, v in side.get("files", {}).items() if k not in volatile_files}
            if _clean(x, top) != _clean(y, top):
                problems.append(f"{name}: JSON differs")
        elif name.endswith(".npz"):
            if a.read_bytes() != b.read_bytes() and not _same_arrays(a, b):
                problems.append(f"{name}: arrays differ")
        elif a.read_bytes() != b.read_bytes():
            problems.append(f"{name}: bytes differ")
    return problems


def _same_arrays(a: Path, b: Path) -> bool:
    with np.load(a) as x, np.load(b) as y:
        if sorted(x.files) != sorted(y.files):
            return False
        return all(x[k].dtype == y[k].dtype and x[k].shape == y[k].shape and x[k].tobytes() == y[k].tobytes()
                   for k in x.files)


def main(argv: list[str]) -> int:
    if not argv or len(argv) % 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        for before, after in zip(argv[::2], argv[1::2]):
            left, right = _folder(Path(before), Path(scratch) / "a"), _folder(Path(after), Path(scratch) / "b")
            problems = compare(left, right)
            files = sum(1 for p in left.rglob("*") if p.is_file())
            print(f"{before} vs {after}: " + ("identical" if not problems else f"{len(problems)} difference(s)")
                  + f" ({files} files)")
            for line in problems[:20]:
                print("  " + line)
            failed += bool(problems)
    return 1 if failed else 0


def _folder(bundle: Path, scratch: Path) -> Path:
    """A folder bundle as it is; a .zip bundle extracted into *scratch* (emptied first)."""
    if bundle.is_dir():
        return bundle
    import shutil

    shutil.rmtree(scratch, ignore_errors=True)
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(scratch)
    return scratch


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
