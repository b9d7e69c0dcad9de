"""qdqreport: diagnose accuracy loss of INT8 Q/DQ ONNX models, stage by stage."""

__version__ = "0.1.0"
