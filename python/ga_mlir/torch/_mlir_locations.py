"""torch-mlir's IR in the user's terms: the file and line of an op's
location read as data, and the op (and PyTorch operation) that a failure of
torch-mlir's lowering is at, found on the IR from the failure's location.

The parts of a location are read through MLIR's C API in torch-mlir's own
library (mlir-c/IR.h: mlirLocationIsACallSite, ...CallSiteGetCallee, ...):
the Python bindings torch-mlir bundles create file, call-site, fused and
name locations but have no accessor for their parts, and the printed form
of a location is not read (no text of the IR or of a diagnostic is)."""

import ctypes
import functools
import os

from ._locations import UNLOCATED


class _Handle(ctypes.Structure):
    """MlirLocation and MlirIdentifier (mlir-c/IR.h): one pointer."""
    _fields_ = [("ptr", ctypes.c_void_p)]


class _StringRef(ctypes.Structure):
    """MlirStringRef (mlir-c/Support.h)."""
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]


# (C API function, result type); each takes one MlirLocation, but
# mlirIdentifierStr (an MlirIdentifier) and mlirLocationFusedGetLocations
# (with the array to fill).
_FUNCTIONS = {
    "mlirLocationIsAFileLineColRange": ctypes.c_bool,
    "mlirLocationFileLineColRangeGetFilename": _Handle,
    "mlirLocationFileLineColRangeGetStartLine": ctypes.c_int,
    "mlirLocationIsACallSite": ctypes.c_bool,
    "mlirLocationCallSiteGetCallee": _Handle,
    "mlirLocationCallSiteGetCaller": _Handle,
    "mlirLocationIsAFused": ctypes.c_bool,
    "mlirLocationFusedGetNumLocations": ctypes.c_ssize_t,
    "mlirLocationFusedGetLocations": None,
    "mlirLocationIsAName": ctypes.c_bool,
    "mlirLocationNameGetChildLoc": _Handle,
    "mlirIdentifierStr": _StringRef,
}


@functools.lru_cache(maxsize=None)
def _capi():
    """torch-mlir's C API library (the one its Python bindings are loaded
    from, so that its locations are this library's objects), with the
    signatures of _FUNCTIONS; and the CPython capsule functions that give
    the C object of a binding's `_CAPIPtr`."""
    from torch_mlir import _mlir_libs

    lib = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__),
                                   "libTorchMLIRAggregateCAPI.so"))
    for name, result in _FUNCTIONS.items():
        function = getattr(lib, name)
        function.restype = result
        function.argtypes = [_Handle]
    lib.mlirLocationFusedGetLocations.argtypes = [
        _Handle, ctypes.POINTER(_Handle)]
    # A PyDLL of its own: argtypes set here do not reach ctypes.pythonapi.
    python = ctypes.PyDLL(None)
    python.PyCapsule_GetName.restype = ctypes.c_char_p
    python.PyCapsule_GetName.argtypes = [ctypes.py_object]
    python.PyCapsule_GetPointer.restype = ctypes.c_void_p
    python.PyCapsule_GetPointer.argtypes = [ctypes.py_object,
                                            ctypes.c_char_p]
    return lib, python


def location_frames(location):
    """(file, line) of each file location in a location of torch-mlir's
    IR, innermost frame first: a call site's callee then its callers (the
    FX importer's form of a node's stack), a fused location's parts in
    order, a name location's child; [] for an unknown location."""
    lib, python = _capi()
    capsule = location._CAPIPtr
    pending = [_Handle(python.PyCapsule_GetPointer(
        capsule, python.PyCapsule_GetName(capsule)))]
    frames = []
    while pending:
        current = pending.pop()
        if lib.mlirLocationIsAFileLineColRange(current):
            name = lib.mlirIdentifierStr(
                lib.mlirLocationFileLineColRangeGetFilename(current))
            frames.append((ctypes.string_at(name.data, name.length).decode(),
                           lib.mlirLocationFileLineColRangeGetStartLine(
                               current)))
        elif lib.mlirLocationIsACallSite(current):
            pending += [lib.mlirLocationCallSiteGetCaller(current),
                        lib.mlirLocationCallSiteGetCallee(current)]
        elif lib.mlirLocationIsAFused(current):
            parts = (_Handle * lib.mlirLocationFusedGetNumLocations(
                current))()
            lib.mlirLocationFusedGetLocations(current, parts)
            pending += reversed(parts)
        elif lib.mlirLocationIsAName(current):
            pending.append(lib.mlirLocationNameGetChildLoc(current))
    return frames


def describe_location(location):
    """An MLIR location of the imported step as "file:line" of its
    innermost frame, with the frames that called it; UNLOCATED when it has
    none."""
    frames = location_frames(location)
    if not frames:
        return UNLOCATED
    callers = ", ".join(f"{f}:{n}" for f, n in frames[1:])
    return f"{frames[0][0]}:{frames[0][1]}" + (
        f" (called from {callers})" if callers else "")


def _operations(operation, keep):
    """The ops nested in `operation` (itself included) for which `keep`
    holds, in the order of the IR (outer before inner)."""
    from torch_mlir import ir

    found = []

    def visit(op):
        if keep(op):
            found.append(op)
        return ir.WalkResult.ADVANCE
    operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def first_location(operation, prefix):
    """file:line of the innermost frame of the first op named `prefix`... in
    `operation` that has a file location, or UNLOCATED."""
    for op in _operations(operation, lambda op: op.name.startswith(prefix)):
        frames = location_frames(op.location)
        if frames:
            return f"{frames[0][0]}:{frames[0][1]}"
    return UNLOCATED


def _nearest_located(op, limit=256):
    """The location of the nearest op that names a file, breadth first over
    the users of `op`'s results and the producers of its operands (users
    first), or None."""
    seen, frontier = set(), [op]
    while frontier and len(seen) < limit:
        following = []
        for current in frontier:
            neighbours = [use.owner for result in current.results
                          for use in result.uses]
            neighbours += [operand.owner for operand in current.operands
                           if hasattr(operand.owner, "location")]
            for other in neighbours:
                key = other.operation if hasattr(other, "operation") \
                    else other
                if key in seen:
                    continue
                seen.add(key)
                if location_frames(other.location):
                    return other.location
                following.append(other)
        frontier = following
    return None


def _aten_name(op):
    """X of the PyTorch operation torch.ops.aten.X that an op of torch-mlir
    stands for (torch.aten.X.overload, or a torch.operator named
    "torch.aten.X": an operation torch-mlir has no op of), or None."""
    from torch_mlir import ir

    name = op.name
    if name == "torch.operator":
        name = ir.StringAttr(op.attributes["name"]).value
    prefix = "torch.aten."
    return name[len(prefix):].partition(".")[0] \
        if name.startswith(prefix) else None


def _pytorch_readers(ops, limit=256):
    """The nearest ops of torch's dialect that stand for a PyTorch operation
    (_aten_name) and read the results of `ops`, directly or through other
    ops of torch's dialect (a list of constants), breadth first; [] if
    none."""
    seen, frontier = set(), list(ops)
    while frontier and len(seen) < limit:
        readers = []
        for op in frontier:
            for result in op.results:
                for use in result.uses:
                    user = use.owner
                    user = getattr(user, "operation", user)
                    if user not in seen and user.name.startswith("torch."):
                        seen.add(user)
                        readers.append(user)
        named = [op for op in readers if _aten_name(op)]
        if named:
            return named
        frontier = readers
    return []


def locate_failures(errors, module):
    """torch-mlir's (location, message) errors as (location, X) with X of
    the PyTorch operation torch.ops.aten.X that the error is at, or None.

    The op an error is at is found on `module` (the IR as the failing
    pipeline left it, or None) by the error's location. Among the ops of
    torch-mlir's torch dialect there: the first torch.operator (an
    operation torch-mlir imports without an op of its own, which no
    pattern lowers; a conversion legalizes ops in order and stops at the
    first it cannot); else those that stand for a PyTorch operation; else
    (a constant, a literal, a list: left because what reads it was not
    lowered, and the backend contract's check reports the first op left)
    the nearest PyTorch operations of torch's dialect that read the first,
    at their location. X is named only when those are all of one PyTorch
    operation. An error still without a line takes the line of the
    nearest located op to the first of them (an op that torch-mlir created
    without a location: its users, the model's operations, have one)."""
    located = []
    for location, _ in errors:
        ops = [] if module is None else _operations(
            module.operation, lambda op: op.name.startswith("torch.") and
            op.location == location)
        ops = [op for op in ops if op.name == "torch.operator"][:1] or \
            [op for op in ops if _aten_name(op)] or \
            _pytorch_readers(ops[:1]) or ops
        if ops and location_frames(ops[0].location):
            location = ops[0].location
        names = {_aten_name(op) for op in ops}
        name = names.pop() if len(names) == 1 else None
        if ops and not location_frames(location):
            location = _nearest_located(ops[0]) or location
        located.append((location, name))
    return located


def pytorch_operation(name):
    """"torch.X (torch.ops.aten.X), " for the PyTorch operation
    torch.ops.aten.X (torch.ops.aten.X alone when torch has no function X),
    or "" for None."""
    import torch

    if name is None:
        return ""
    public = f"torch.{name} (torch.ops.aten.{name})" if hasattr(
        torch, name) and not name.startswith("_") else \
        f"torch.ops.aten.{name}"
    return public + ", "
