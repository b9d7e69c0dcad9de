"""A seeded mutator over real bundles: JSON values, CSV cells and headers, .npz keys/dtypes/shapes, paths, zip structure.

A case is fully determined by (seed bundle, run seed, case index): `make_case` draws from
random.Random(f"{run_seed}:{index}"), so any case can be rebuilt for replay. After the file
mutations every listed file is RE-HASHED into the manifest (sha256 and bytes), otherwise every
case would stop at the hash check; manifest mutations come after the re-hash, so a mutated
`files` entry stays mutated.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

MANIFEST = "manifest.json"
DIRECTORY = b"\0<directory>\0"  # a files-map value meaning "make this path a folder"
DEEP = "@@deep@@"  # a string marker dump_json replaces by that many nested lists

# Values a stranger's or a broken tool's bundle may carry where the schema expects something else.
HOSTILE_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2**63, -(2**63), 10**40, 0.5, -0.0, 1e308, -1e308, float("nan"), float("inf"),
    float("-inf"), "", "x", "A" * 100_000, "\ud800", "ab\udfffcd", "$\\cmd{$", "$x^2$", "<img src=x onerror=1>",
    "[link](https://example.com)", "@everyone", "a|b", "line\nbreak", "1." + "0" * 5000, "../../etc/passwd",
    "/dev/zero", "NaN", "-inf", [], {}, [1, 2, 3], {"a": 1}, ["x"] * 3, [None], [[[]]],
)
CSV_CELLS = ("", "nan", "inf", "-inf", "-1", "0", "1e999", "-1e999", "9" * 5000, "x", "1.5", "-2147483649",
             "99999999999999999999", "$\\cmd{$", "a|b", "<b>x</b>", "line\nbreak", "A" * 20_000, "0x10", " 1 ", "1_000")
NPZ_KEYS = ("abc", "000000/", "/x", "-1/out", "999999999/out", "000000/" + "n" * 300, "000000/$\\cmd{$", "00000a/out",
            "000000/out/extra", "1e3/out", "")
NPZ_DTYPES = ("int8", "uint8", "bool", "float16", "float64", "complex64", "U4", "S3", "int64", "datetime64[s]")
PATHS = ("../outside.json", "/etc/passwd", "/dev/zero", "stages", ".", "", "a/../manifest.json", "stages//x",
         "missing/file.json", "manifest.json", "C:\\x", "stages/../../x", "\ud800.json")


@dataclass
class Case:
    """One mutated bundle: its files, the manifest (parsed), how it is stored, and what was done to it."""

    seed: str
    files: dict[str, bytes]
    manifest: Any
    as_zip: bool = False
    zip_mode: str = ""
    manifest_bytes: bytes | None = None  # raw manifest override (byte-level mutation)
    steps: list[str] = field(default_factory=list)


def make_case(seeds: dict[str, dict[str, bytes]], run_seed: int, index: int) -> Case:
    """The case *index* of run *run_seed*: a seed bundle and 1-3 mutations, deterministically."""
    rng = random.Random(f"{run_seed}:{index}")
    seed = rng.choice(sorted(seeds))
    files = dict(seeds[seed])
    case = Case(seed, files, json.loads(files.pop(MANIFEST)))
    # A quarter of the cases mutate only the manifest; the others 1-3 files (and sometimes the manifest too).
    count = rng.choice((0, 1, 1, 1, 2, 2, 3, 0))
    file_ops = rng.choices(FILE_OPS, weights=[w for _, w in FILE_OPS_W], k=count)
    manifest_op = not file_ops or rng.random() < 0.2
    for op in file_ops:
        _safely(case, op, rng)
    rehash(case)
    if manifest_op:
        _safely(case, mutate_manifest, rng)
    if rng.random() < 0.03:
        _safely(case, corrupt_manifest_bytes, rng)
    if rng.random() < 0.12:
        case.as_zip = True
        case.zip_mode = rng.choice(("plain", "plain", "plain", "prefix", "dup", "dir_entry", "slip", "truncate",
                                    "stored_lie"))
        case.steps.append(f"zip:{case.zip_mode}")
    return case


def _safely(case: Case, op: Callable[[Case, random.Random], None], rng: random.Random) -> None:
    # A mutation that finds nothing to mutate (no CSV in this seed) just records so.
    # An earlier step may have left a file the next one cannot parse (a truncated .npz): also "nothing".
    try:
        op(case, rng)
    except Exception as exc:  # noqa: BLE001
        case.steps.append(f"{op.__name__}: nothing ({type(exc).__name__}: {str(exc)[:80]})")


class _Nothing(Exception):
    pass


# --- JSON values ------------------------------------------------------------------------------
def _paths(value: Any, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    out = [prefix]
    if depth > 12:
        return out
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value[:40]):  # long lists: their head is enough
            out += _paths(item, (*prefix, i), depth + 1)
    return out


def _get(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


def hostile_value(rng: random.Random, old: Any) -> Any:
    roll = rng.random()
    if roll < 0.08:
        return f"{DEEP}{rng.choice((50, 2000, 100_000))}"  # written as that many nested lists
    if roll < 0.2 and isinstance(old, (int, float)) and not isinstance(old, bool):
        return rng.choice((-old, old * 1e6, old + 1, -1, 0, 2**31, float("nan"), 1e300))
    if roll < 0.3 and isinstance(old, str):
        return rng.choice((old * 500, old + "\ud83d", "$" + old + "{$", old.upper(), old[: len(old) // 2]))
    if roll < 0.36 and isinstance(old, list) and old:
        return old * rng.choice((2, 50)) if len(old) < 200 else old[:1]
    return rng.choice(HOSTILE_VALUES)


def mutate_json_tree(doc: Any, rng: random.Random) -> tuple[Any, str]:
    """Replace, delete or add one node of a parsed JSON document; return it and a description."""
    path = rng.choice(_paths(doc))
    if not path:
        return hostile_value(rng, doc), "root replaced"
    parent, key = _get(doc, path[:-1]), path[-1]
    action = rng.random()
    if action < 0.12 and isinstance(parent, dict):
        del parent[key]
        return doc, f"deleted {_show(path)}"
    if action < 0.18 and isinstance(parent, dict):
        parent[rng.choice(("extra", "$\\cmd{$", "\ud800", "__proto__"))] = hostile_value(rng, None)
        return doc, f"added a key beside {_show(path)}"
    new = hostile_value(rng, parent[key])
    parent[key] = new
    return doc, f"{_show(path)} = {_short(new)}"


def _show(path: tuple) -> str:
    return ".".join(str(p) for p in path)[:200]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def dump_json(doc: Any) -> bytes:
    """JSON text; NaN/Infinity as the tokens json.loads accepts, lone surrogates as escapes, DEEP markers nested."""
    text = json.dumps(doc, indent=1)
    return re.sub(f'"{DEEP}(\\d+)"', lambda m: "[" * int(m.group(1)) + "1" + "]" * int(m.group(1)), text).encode()


def mutate_artifact_json(case: Case, rng: random.Random) -> None:
    names = [n for n in case.files if n.endswith(".json") and case.files[n] is not DIRECTORY]
    if not names:
        raise _Nothing("no JSON artifact")
    name = rng.choice(names)
    try:
        doc = json.loads(case.files[name])
    except (ValueError, RecursionError):
        raise _Nothing(f"{name} is not JSON") from None
    doc, what = mutate_json_tree(doc, rng)
    case.files[name] = dump_json(doc)
    case.steps.append(f"json {name}: {what}")


def mutate_manifest(case: Case, rng: random.Random) -> None:
    # Mostly below the top level: a replaced `stages` or `files` only tests the manifest check.
    doc, what = mutate_json_tree(case.manifest, rng)
    case.manifest = doc
    case.steps.append(f"manifest: {what}")


def corrupt_manifest_bytes(case: Case, rng: random.Random) -> None:
    raw = bytearray(dump_json(case.manifest))
    choice = rng.choice(("truncate", "flip", "bom", "latin1", "huge_number"))
    if choice == "truncate":
        raw = raw[: rng.randrange(len(raw))]
    elif choice == "flip":
        for _ in range(3):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
    elif choice == "bom":
        raw = bytearray(b"\xef\xbb\xbf") + raw
    elif choice == "latin1":
        raw = raw.replace(b'"qdqreport"', b'"qdqr\xe9port"', 1)
    else:
        raw = raw.replace(b'"created_at"', b'"big": ' + b"9" * 5000 + b', "created_at"', 1)
    case.manifest_bytes = bytes(raw)
    case.steps.append(f"manifest bytes: {choice}")


# --- CSV --------------------------------------------------------------------------------------
def _csv_rows(case: Case, rng: random.Random) -> tuple[str, list[list[str]]]:
    names = [n for n in case.files if n.endswith(".csv") and case.files[n] is not DIRECTORY]
    if not names:
        raise _Nothing("no CSV table")
    name = rng.choice(names)
    return name, list(csv.reader(io.StringIO(case.files[name].decode("utf-8", "replace"))))


def _write_csv(case: Case, name: str, rows: list[list[str]], raw_tail: bytes = b"") -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    case.files[name] = buffer.getvalue().encode("utf-8", "surrogatepass") + raw_tail


def mutate_csv_cell(case: Case, rng: random.Random) -> None:
    name, rows = _csv_rows(case, rng)
    if len(rows) < 2:
        raise _Nothing(f"{name} has no rows")
    row = rng.randrange(1, len(rows))
    col = rng.randrange(max(len(rows[row]), 1))
    value = rng.choice(CSV_CELLS)
    if col < len(rows[row]):
        rows[row][col] = value
    _write_csv(case, name, rows)
    case.steps.append(f"csv {name}: row {row} col {col} = {_short(value)}")


def mutate_csv_shape(case: Case, rng: random.Random) -> None:
    name, rows = _csv_rows(case, rng)
    choice = rng.choice(("drop_header_col", "rename_header", "swap_header", "no_rows", "empty_file", "short_row",
                         "long_row", "duplicate_rows", "invalid_utf8", "bare_quote", "nul_byte"))
    tail = b""
    if choice == "drop_header_col" and rows:
        rows[0].pop(rng.randrange(len(rows[0])))
    elif choice == "rename_header" and rows:
        rows[0][rng.randrange(len(rows[0]))] = rng.choice(("", "x", "cosine", "$\\cmd{$", "A" * 5000))
    elif choice == "swap_header" and rows and len(rows[0]) > 1:
        i, j = rng.sample(range(len(rows[0])), 2)
        rows[0][i], rows[0][j] = rows[0][j], rows[0][i]
    elif choice == "no_rows":
        rows = rows[:1]
    elif choice == "empty_file":
        rows = []
    elif choice == "short_row" and len(rows) > 1:
        rows[-1] = rows[-1][:1]
    elif choice == "long_row" and len(rows) > 1:
        rows[-1] = rows[-1] + ["extra"] * 50
    elif choice == "duplicate_rows" and len(rows) > 1:
        rows = rows[:1] + rows[1:] * rng.choice((2, 20))
    elif choice == "invalid_utf8":
        tail = b"\xff\xfe\xed\n"
    elif choice == "bare_quote" and len(rows) > 1:
        tail = b'"unterminated,1,2\n'
    elif choice == "nul_byte":
        tail = b"a\x00b,1\n"
    _write_csv(case, name, rows, tail)
    case.steps.append(f"csv {name}: {choice}")


# --- .npz -------------------------------------------------------------------------------------
def _npz(case: Case, rng: random.Random) -> tuple[str, dict[str, np.ndarray]]:
    names = [n for n in case.files if n.endswith(".npz") and case.files[n] is not DIRECTORY]
    if not names:
        raise _Nothing("no .npz")
    name = rng.choice(names)
    with np.load(io.BytesIO(case.files[name]), allow_pickle=False) as data:
        return name, {key: data[key] for key in data.files}


def _save_npz(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def mutate_npz(case: Case, rng: random.Random) -> None:
    name, arrays = _npz(case, rng)
    if not arrays:
        raise _Nothing(f"{name} is empty")
    key = rng.choice(sorted(arrays))
    value = arrays[key]
    choice = rng.choice(("rename", "dtype", "scalar", "empty", "extra_dim", "drop_dim", "nonfinite", "drop_key",
                         "add_key", "huge_values", "shape_header", "truncate", "transpose"))
    if choice == "rename":
        arrays[rng.choice(NPZ_KEYS)] = arrays.pop(key)
    elif choice == "dtype":
        dtype = rng.choice(NPZ_DTYPES)
        arrays[key] = value.astype(dtype) if dtype not in ("U4", "S3") else np.full(value.shape, "ab", dtype=dtype)
    elif choice == "scalar":
        arrays[key] = np.asarray(value.reshape(-1)[0] if value.size else 0.0)
    elif choice == "empty":
        arrays[key] = np.zeros((0,) + value.shape[1:], value.dtype)
    elif choice == "extra_dim":
        arrays[key] = np.stack([value] * 3)
    elif choice == "drop_dim":
        arrays[key] = value.reshape(-1)[: max(value.size // 2, 1)]
    elif choice == "nonfinite" and value.dtype.kind == "f" and value.size:
        flat = value.copy().reshape(-1)
        flat[rng.randrange(flat.size)] = rng.choice((np.nan, np.inf, -np.inf))
        arrays[key] = flat.reshape(value.shape)
    elif choice == "drop_key":
        arrays.pop(key)
    elif choice == "add_key":
        arrays[f"{len(arrays) + 900000:06d}/{key.split('/')[-1]}"] = value
    elif choice == "huge_values" and value.dtype.kind == "f":
        arrays[key] = value * np.asarray(1e38, value.dtype)
    elif choice == "transpose" and value.ndim >= 2:
        arrays[key] = value.T.copy()
    raw = _save_npz(arrays)
    if choice == "shape_header":
        raw = _npz_declared_shape(arrays, key, rng.choice(((10**12,), (2**31, 2**31), (0,), (-1,))))
    elif choice == "truncate":
        raw = raw[: rng.randrange(len(raw))]
    case.files[name] = raw
    case.steps.append(f"npz {name}: {choice} {key!r}")


def _npz_declared_shape(arrays: dict[str, np.ndarray], key: str, shape: tuple[int, ...]) -> bytes:
    """The .npz with one member's .npy header declaring *shape* (a bomb or a lie), its data unchanged."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            member = io.BytesIO()
            np.save(member, array)
            data = member.getvalue()
            if name == key:
                old = repr(tuple(array.shape)).encode()
                data = data.replace(b"'shape': " + old, b"'shape': " + repr(shape).encode().ljust(len(old)), 1)
            archive.writestr(name + ".npy", data)
    return buffer.getvalue()


# --- paths and files --------------------------------------------------------------------------
def mutate_paths(case: Case, rng: random.Random) -> None:
    listed = sorted(k for k in case.files)
    if not listed:
        raise _Nothing("no files")
    target = rng.choice(listed)
    choice = rng.choice(("artifact_to_path", "files_key", "delete_file", "dir_instead", "unlisted", "swap_kinds"))
    if choice == "artifact_to_path":
        _repoint(case, target, rng.choice(PATHS))
    elif choice == "files_key":
        # The entry moves to a hostile key; the artifact still names the old one (then missing).
        entry = case.manifest.get("files", {}).pop(target, {"sha256": "0" * 64})
        case.manifest.setdefault("files", {})[rng.choice(PATHS)] = entry
    elif choice == "delete_file":
        case.files.pop(target)
    elif choice == "dir_instead":
        case.files[target] = DIRECTORY
    elif choice == "unlisted":
        case.files["extra/" + rng.choice(("a.json", "b.csv", "c.npz"))] = b"junk"
    else:
        others = [k for k in listed if k.rsplit(".", 1)[-1] != target.rsplit(".", 1)[-1]]
        if others:
            case.files[target] = case.files[rng.choice(others)]
    case.steps.append(f"paths: {choice} {target}")


def _repoint(case: Case, old: str, new: str) -> None:
    """Point whatever manifest field names *old* at *new* (and list *new* in files when it exists)."""
    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if value == old:
                    node[key] = new
                else:
                    walk(value)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if value == old:
                    node[i] = new
                else:
                    walk(value)

    walk({k: v for k, v in case.manifest.items() if k != "files"})
    entry = case.manifest.get("files", {}).pop(old, None)
    if entry is not None:
        case.manifest["files"][new] = entry


FILE_OPS_W = ((mutate_artifact_json, 35), (mutate_csv_cell, 18), (mutate_csv_shape, 10), (mutate_npz, 17),
              (mutate_paths, 8))
FILE_OPS = [op for op, _ in FILE_OPS_W]


def rehash(case: Case) -> None:
    """Update sha256 and bytes of every listed file that exists, so mutations get past the hash check."""
    listed = case.manifest.get("files") if isinstance(case.manifest, dict) else None
    if not isinstance(listed, dict):
        return
    for name, entry in listed.items():
        data = case.files.get(name)
        if isinstance(entry, dict) and data is not None and data is not DIRECTORY:
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["bytes"] = len(data)


def manifest_bytes(case: Case) -> bytes:
    return case.manifest_bytes if case.manifest_bytes is not None else dump_json(case.manifest)
