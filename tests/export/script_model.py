"""Writes the TorchScript form of a model of models.py, for C++ to load and observe.

    /usr/bin/python3 tests/export/script_model.py <resnet18|encoder|bert|flat_decoder|patches|convnet|fasterrcnn|lstm> <file.pt>
"""
import sys

import torch

import models

if __name__ == "__main__":
    name, path = sys.argv[1], sys.argv[2]
    torch.jit.script(models.make(name)).save(path)
    print(f"scripted {name} to {path}")
