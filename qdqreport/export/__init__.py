"""`qdqreport export`: a bundle's evidence in the formats other tools open (Model Explorer node
data, Polygraphy RunResults). Reads only through qdqreport.bundle.reader.Bundle; never imports
onnxruntime or tensorrt."""
