"""Load a user's Python script, FILE.py[:func], the one way --data-loader-script and --postprocess share.

The convention is Polygraphy's (--data-loader-script, --postprocess-func-script): a file path,
optionally followed by `:function`. The file is imported under a module name of our own, so it
neither shadows nor is shadowed by an installed module of the same name (Polygraphy imports it by
its bare file name, which a script called `json.py` or `data.py` gets wrong). The module is in
sys.modules while it runs, as a normal import would have it: `@dataclass` with
`from __future__ import annotations` looks its module up there.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from qdqreport.errors import InputError

# Whether this process has run a user's script: the CLI then ends with the interpreter's usual teardown (cli.exit_now),
# which closes and flushes whatever files the script left open.
USER_CODE_RAN = False


def split_spec(spec: str, default: str) -> tuple[Path, str]:
    """FILE.py[:func] -> (path, func); the colon after a Windows drive letter is not a separator."""
    drive = spec[:2] if len(spec) > 1 and spec[1] == ":" else ""
    rest = spec[len(drive):]
    if ".py:" in rest:
        path, function = rest.rsplit(":", 1)
        return Path(drive + path), function or default
    return Path(spec), default


def import_script(path: Path, what: str) -> Any:
    """Import *path* as a module; any failure (SyntaxError, ImportError, sys.exit) is an InputError."""
    global USER_CODE_RAN
    name = f"qdqreport_user_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"{path}: cannot import the {what}; pass a Python file FILE.py[:function]")
    module = importlib.util.module_from_spec(spec)
    USER_CODE_RAN = True
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # the script may import its neighbours
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # SyntaxError, ImportError, SystemExit from a script that runs on import
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise InputError(f"{path}: cannot import the {what}, {type(exc).__name__}: {one_line(exc)}; "
                         f"make `python {path.name}` import cleanly") from None
    finally:
        sys.modules.pop(name, None)
        sys.path.remove(folder)
    return module


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
