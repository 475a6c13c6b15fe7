"""yobx: exact symbolic shape inference for ONNX models, in-process.

The C++ library yobx (a header-only C++20 library) seen from Python:

- :mod:`yobx.onnx` gives every value of an ONNX model its shape, dims written as
  expressions of the inputs' dims (``(height + 31)//32``, ``past + seq``), like
  ``onnx.shape_inference.infer_shapes``; :mod:`yobx.onnx.ort` is a drop-in for
  onnxruntime's ``SymbolicShapeInference`` that its own tools use unchanged;
- :mod:`yobx.sym` reads, prints, evaluates, simplifies and compares those
  expressions.

Submodules are imported on first use: ``import yobx`` alone imports neither
``onnx`` nor onnxruntime.
"""
import importlib

__version__ = "0.1.0"
__all__ = ["onnx", "sym"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'yobx' has no attribute '{name}'")
