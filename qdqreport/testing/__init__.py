"""Test support for rules and plug-ins: BundleBuilder writes small real bundles (builder.py); recipes.py and
layer_examples.py shape the data of the rules' Fires/Quiet examples; trt_dumps.py holds real TensorRT
engine dumps (shipped as package data in data/trt/); examples.py runs every rule's examples.
Imports nothing of the collector.
"""

from qdqreport.testing.builder import BundleBuilder

__all__ = ["BundleBuilder"]
