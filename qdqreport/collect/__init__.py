"""The collector: runs each stage once on the same inputs and writes a bundle.

Only this package imports onnx, onnxruntime, polygraphy or tensorrt.
"""
