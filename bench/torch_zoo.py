"""The model zoo of the frontend's tests (test/python/torch/model_zoo.py):
each model's largest difference from PyTorch's float32 step and from a
float64 copy, and the compile time (the first call: tracing, ga-mlir, the C
compiler), as a table.

    PYTHONPATH=build/python_packages:test/python/torch \\
        .venv/bin/python bench/torch_zoo.py [model ...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "python", "torch"))

import model_zoo  # noqa: E402
from ga_mlir.torch import CompileError  # noqa: E402


def main(names):
    model_zoo.quiet()
    print("| model | optimizer, N | vs PyTorch fp32 | vs float64 | PyTorch "
          "fp32 vs float64 | compile (s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in names or model_zoo.MODELS:
        for optimizer, n in (("sgd", 3), ("adamw", 4)):
            try:
                r = model_zoo.compare(model_zoo.MODELS[name], optimizer, n)
            except CompileError as error:
                first = next((line for line in str(error).splitlines()
                              if "error" in line), str(error))
                print(f"| {name} | {optimizer}, {n} | refused: {first} "
                      "| | | |", flush=True)
                continue
            print(f"| {name} | {optimizer}, {n} | {r['vs_pytorch']:.2g} | "
                  f"{r['vs_float64']:.2g} | {r['pytorch_vs_float64']:.2g} | "
                  f"{r['compile_s']:.0f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
