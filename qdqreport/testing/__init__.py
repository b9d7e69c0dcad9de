"""Test support for rules and plug-ins: BundleBuilder writes small real bundles (builder.py), trt_dumps.py
holds real TensorRT engine dumps (shipped as package data in data/trt/). Imports nothing of the collector.
"""

from qdqreport.testing.builder import BundleBuilder

__all__ = ["BundleBuilder"]
