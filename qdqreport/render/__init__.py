"""The renderer: a bundle's findings to HTML, Markdown and findings.json. Never imports onnxruntime or tensorrt."""
