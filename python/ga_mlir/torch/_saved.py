"""Saved compiled steps: compile on a build machine, train on the cluster.

`CompiledTrainStep.save(dir)` writes

    dir/libstep.so          the step (CPU or CUDA), from ga-compile
    dir/lib*.so             our runtime libraries it needs (RUNPATH $ORIGIN)
    dir/step.json           its signature: the StepLayout (_layout)

and `load_step(dir, model, optimizer)` checks the model and the optimizer
against the signature (parameter names, shapes and dtypes, buffers, the
optimizer's class, the settings baked into its traced step and its state
names), with a CompileError naming the
first difference, and returns a callable that updates them in place like
the compiled step. Loading needs torch and ctypes only: no torch-mlir, no
ga-mlir library, no LLVM. Inputs must have the shapes the step was compiled
for (a saved step is not traced again).
"""

import hashlib
import json
import os
import shutil
import threading

import torch

from ._call import CpuLibrary, CudaLibrary, call_step, new_hyper, \
    require_cuda
from ._common import CompileError
from ._fastcall import CallPlan
from ._layout import StepLayout

SIGNATURE = "step.json"
LIBRARY = "libstep.so"


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def save_step(directory, library, layout, data_parallel=None):
    """Copies `library` and the runtime libraries beside it into
    `directory` and writes the signature (with `data_parallel`, the
    contract of a data-parallel step: see _dp_saved)."""
    os.makedirs(directory, exist_ok=True)
    source = os.path.dirname(library)
    for name in sorted(os.listdir(source)):
        if name.endswith(".so") and name != os.path.basename(library):
            shutil.copy2(os.path.join(source, name),
                         os.path.join(directory, name))
    shutil.copy2(library, os.path.join(directory, LIBRARY))
    signature = dict(layout.to_dict(), library=LIBRARY,
                     sha256=_digest(library))
    if data_parallel is not None:
        signature["data_parallel"] = data_parallel
    tmp = os.path.join(directory, SIGNATURE + ".tmp")
    with open(tmp, "w") as f:
        json.dump(signature, f, indent=1)
    os.replace(tmp, os.path.join(directory, SIGNATURE))


def _read_signature(directory):
    path = os.path.join(directory, SIGNATURE)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise CompileError(f"load_step: cannot read {path}: {e}",
                           code="file-unreadable") from None


class LoadedTrainStep:
    """A saved step, checked against `model` and `optimizer`: call it with
    the inputs of one whole batch (the shapes it was compiled for)."""

    def __init__(self, directory, model, optimizer, signature=None):
        if signature is None:
            signature = _read_signature(directory)
        self.layout = StepLayout.from_dict(
            {k: v for k, v in signature.items()
             if k not in ("library", "sha256", "data_parallel")})
        self.library_path = os.path.join(directory, signature["library"])
        if not os.path.exists(self.library_path) or \
                _digest(self.library_path) != signature["sha256"]:
            raise CompileError(f"load_step: {self.library_path} is missing "
                               "or is not the library the signature was "
                               "written for",
                               code="saved-step-format")
        self.spec = self.layout.check(model, optimizer)
        self.model, self.optimizer = model, optimizer
        self.target = self.layout.target
        self.micro_batches = self.layout.micro_batches
        self.in_place = [tuple(p) for p in self.layout.in_place]
        self.lock = threading.Lock()
        self.hyper = None
        self._library = None
        self._plan = None  # the fast path of the last call (_fastcall)

    def _load(self):
        if self._library is None:
            results = self.layout.result_types()
            if self.in_place:  # the loss and the metrics come back
                results = results[-1 - len(self.spec.metrics):]
            if self.target == "cuda":
                require_cuda("load_step")
                self._library = CudaLibrary(self.library_path, results)
            else:
                self._library = CpuLibrary(self.library_path, results)
        return self._library

    def _new_hyper(self):
        return new_hyper(self.spec, "cuda" if self.target == "cuda" else
                         "cpu")

    def chosen_micro_batches(self):
        return self.micro_batches

    def library(self):
        """The loaded library (what _fastcall.CallPlan asks a variant)."""
        return self._load()

    def __call__(self, *inputs):
        self.layout.check_inputs(inputs)
        inputs = tuple(t.contiguous() for t in inputs)
        plan = self._plan
        if plan is not None and plan.holds(self, inputs):
            with self.lock:
                return plan.call(inputs)
        self._plan = None
        with self.lock, torch.no_grad():
            # The model and the optimizer may have changed since the last
            # call (a parameter replaced, new param groups): bind to what
            # they are now, checked against the signature again.
            self.spec = self.layout.check(self.model, self.optimizer)
            library = self._load()
            if self.hyper is None:
                self.hyper = self._new_hyper()
            loss = call_step(library, self.spec, self.model, inputs,
                             self.hyper, self.in_place)
            self._plan = CallPlan.build(self, self, inputs)
        return loss
