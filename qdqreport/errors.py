"""User-facing errors: each carries one line that names the file and the fix."""

from __future__ import annotations


class QdqReportError(Exception):
    """An error caused by the user's input; the CLI prints it on one line and exits 2."""


class BundleError(QdqReportError):
    """A bundle that cannot be read: missing, corrupt, or failing validation."""


class SchemaVersionError(BundleError):
    """A bundle written with a newer major schema version than this qdqreport reads."""


class InputError(QdqReportError):
    """A model, input, reference or calibration file that cannot be used."""


class OutputError(QdqReportError):
    """An output that cannot or must not be written: not ours to replace, locked, read-only, disk full."""
