"""Run ga-mlir pass pipelines from Python.

A small pure-Python package over the ga-mlir C API (libGACAPI.so, see
include/ga-c/Registration.h) through ctypes: MLIR's own Python bindings are
not packaged by Debian, and a pipeline run on IR text is what most scripts
need.

    import ga_mlir
    out = ga_mlir.run_pipeline(open("step.mlir").read(),
                               "ga-accumulate{micro-batches=4}")

`verify` checks a rewrite the way `ga-verify --json` does: the step as
written and after the pipeline run on the same seeded inputs, every result
compared, the report returned as a dict:

    report = ga_mlir.verify("step.mlir", micro_batches=4, seeds=3)
    assert report["pass"], report.get("error") or report["results"]

`function_info` reads what a module's function declares (argument and
result types, the N --ga-choose-micro-batches chose) from the parsed IR:

    info = ga_mlir.function_info(text, "train_step")
    info.arguments, info.results, info.micro_batches

`pipeline` is a textual pass pipeline as `ga-opt --pass-pipeline` takes it,
with or without the `builtin.module(...)` anchor. Errors raise
`PipelineError` carrying the located diagnostics; warnings and remarks of a
successful run are issued as Python warnings (`GADiagnosticWarning`).

The library is found next to the package (build and install trees have the
same layout) or at the path in the environment variable GA_CAPI_LIBRARY.
"""

import collections
import ctypes
import json
import os
import threading
import warnings

from ._blas import load_host_blas

# Before any step library binds to it (see _blas).
load_host_blas()

__all__ = ["run_pipeline", "verify", "function_info", "FunctionInfo", "ValueType", "draw_inputs", "DrawnInput",
           "rewrite_gpu_objects", "GpuObject",
           "PipelineError", "Diagnostic", "GADiagnosticWarning",
           "library_path", "library_dir", "build_dir"]


class PipelineError(RuntimeError):
    """Parsing the input, parsing the pipeline or running a pass failed.

    `diagnostics` is the list of diagnostics in the order they were emitted,
    each the located text ga-opt would print (`<input>:3:7: error: ...`); those
    of run_pipeline are `Diagnostic`s, which also carry their stable code.
    """

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)
        message = "\n".join(d.rstrip("\n") for d in self.diagnostics)
        super().__init__(message or "pass pipeline failed")


class Diagnostic(str):
    """One diagnostic of ga-mlir: the text ga-opt prints (the string itself),
    and as data (MlirGADiagnostic, include/ga-c/Diagnostics.h): `severity`
    ("error", "warning", "note", "remark"), `code` (the stable code of
    include/ga/IR/DiagnosticCodes.def, such as "batch-coupling", or None),
    `file`, `line` and `column` of its innermost file location (None, 0, 0
    without one) and `message` (its words, without location and notes)."""

    def __new__(cls, rendered, severity="error", code=None, file=None,
                line=0, column=0, message=None):
        self = super().__new__(cls, rendered)
        self.severity, self.code = severity, code
        self.file, self.line, self.column = file, line, column
        self.message = rendered if message is None else message
        return self


class GADiagnosticWarning(UserWarning):
    """A warning or remark emitted by a pipeline that succeeded."""


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]


class _LogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


_StringCallback = ctypes.CFUNCTYPE(None, _StringRef, ctypes.c_void_p)


class _Diagnostic(ctypes.Structure):
    """MlirGADiagnostic (include/ga-c/Diagnostics.h)."""
    _fields_ = [("severity", ctypes.c_int), ("code", _StringRef),
                ("file", _StringRef), ("line", ctypes.c_uint),
                ("column", ctypes.c_uint), ("message", _StringRef),
                ("rendered", _StringRef)]


_DiagnosticCallback = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Diagnostic),
                                       ctypes.c_void_p)
_SEVERITIES = ("error", "warning", "note", "remark")
_TypeCallback = ctypes.CFUNCTYPE(None, ctypes.c_int, _StringRef, _StringRef,
                                 ctypes.c_ssize_t,
                                 ctypes.POINTER(ctypes.c_int64),
                                 ctypes.c_void_p)


class _FunctionInfo(ctypes.Structure):
    """MlirGAFunctionInfo (include/ga-c/Inspect.h)."""
    _fields_ = [("num_arguments", ctypes.c_ssize_t),
                ("num_results", ctypes.c_ssize_t),
                ("micro_batches", ctypes.c_int64)]


FunctionInfo = collections.namedtuple(
    "FunctionInfo", ["arguments", "results", "micro_batches",
                     "argument_types", "result_types"])
FunctionInfo.__doc__ = """What function_info found: the argument and result
types as MLIR prints them (lists of str), the function's `ga.micro_batches`
(None when it has none), and the argument and result types as ValueTypes
(lists)."""

ValueType = collections.namedtuple("ValueType", ["shape", "element"])
ValueType.__doc__ = """One type of a function, read from the parsed type: a
ranked tensor's shape (a tuple; None for a dynamic size) and element type as
MLIR prints it; for any other type, shape None and the type as MLIR prints
it."""


_ArrayCallback = ctypes.CFUNCTYPE(None, ctypes.c_ssize_t, _StringRef,
                                  ctypes.c_ssize_t,
                                  ctypes.POINTER(ctypes.c_int64),
                                  ctypes.c_void_p, ctypes.c_ssize_t,
                                  ctypes.c_void_p)

DrawnInput = collections.namedtuple("DrawnInput", ["type", "shape", "data"])
DrawnInput.__doc__ = """One argument drawn by draw_inputs: its type as MLIR
prints it (str), the shape drawn (tuple; () for a scalar) and its elements,
row-major, in the element type's format (bytes; bf16 as 2 bytes, i1 as 1)."""


class _VerifyOptions(ctypes.Structure):
    """MlirGAVerifyOptions of include/ga-c/Verify.h."""
    _fields_ = [("micro_batches", ctypes.c_int64),
                ("seed", ctypes.c_uint64),
                ("num_seeds", ctypes.c_uint32),
                ("rtol", ctypes.c_double),
                ("atol", ctypes.c_double),
                ("pipeline", _StringRef),
                ("func_name", _StringRef),
                ("lower_options", _StringRef),
                ("input_name", _StringRef)]

class _GpuObject(ctypes.Structure):
    """MlirGAGpuObject (include/ga-c/GpuObjects.h)."""
    _fields_ = [("binary", _StringRef), ("target", _StringRef),
                ("format", _StringRef), ("data", _StringRef)]


# Returns MlirLogicalResult, a struct of one int8 (ctypes callbacks cannot
# return structures; the C ABIs return both in the same register).
_GpuObjectCallback = ctypes.CFUNCTYPE(ctypes.c_int8,
                                      ctypes.POINTER(_GpuObject),
                                      ctypes.POINTER(_StringRef),
                                      ctypes.c_void_p)

GpuObject = collections.namedtuple("GpuObject",
                                   ["binary", "target", "format", "data"])
GpuObject.__doc__ = """One object of a gpu.binary, as rewrite_gpu_objects
shows it: the binary's symbol name, the object's target attribute as MLIR
prints it, its format (offload, assembly, bin, fatbin; str) and its bytes."""

_LIBRARY = "libGACAPI.so"
_lock = threading.Lock()
_library = None


def library_path():
    """The path of libGACAPI.so this package loads: $GA_CAPI_LIBRARY, else
    the one recorded in the package (the build and install trees of CMake,
    and `pip install`, write it into ga_mlir/_config.py), else
    $GA_BUILD_DIR/lib, else build/lib of the source tree this package is in
    (`pip install -e ./python`)."""
    override = os.environ.get("GA_CAPI_LIBRARY")
    if override:
        return override
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _config
        return os.path.normpath(os.path.join(here,
                                             _config.CAPI_LIBRARY_RELPATH))
    except ImportError:
        pass
    roots = [os.environ.get("GA_BUILD_DIR"),
             os.path.join(here, "..", "..", "build")]
    candidates = [os.path.normpath(os.path.join(root, "lib", _LIBRARY))
                  for root in roots if root]
    for path in candidates:
        if os.path.exists(path):
            return path
    return candidates[-1]


def library_dir():
    """The folder of libGACAPI.so (and of libGAHeapCount.so, GAPlugin.so);
    the tools (ga-opt) are in ../bin of it."""
    return os.path.dirname(library_path())


def build_dir():
    """The build or install tree whose libraries this package uses (the
    folder above library_dir(): bin/ga-opt, lib/). The one rule for finding
    it, shared by ga-compile (ga_mlir.aot), the heap counter and the
    analytics: a package imported from a source tree (`pip install -e
    ./python`) has no _config.py and uses $GA_BUILD_DIR, else build/ of that
    source tree."""
    return os.path.dirname(library_dir())


def _load():
    global _library
    with _lock:
        if _library is None:
            path = library_path()
            try:
                lib = ctypes.CDLL(path)
            except OSError as error:
                raise ImportError(
                    f"ga_mlir: cannot load the ga-mlir C API library {path}: "
                    f"{error} (build ga-mlir with scripts/setup.sh and "
                    f"`pip install ./python` again, or set GA_BUILD_DIR to "
                    f"its build tree or GA_CAPI_LIBRARY to the library)"
                ) from error
            lib.mlirGARunPipeline.argtypes = [
                _StringRef, _StringRef, _StringCallback, _StringCallback,
                ctypes.c_void_p]
            lib.mlirGARunPipeline.restype = _LogicalResult
            lib.mlirGARunPipelineNamed.argtypes = [
                _StringRef, _StringRef, _StringRef, _StringCallback,
                _StringCallback, ctypes.c_void_p]
            lib.mlirGARunPipelineNamed.restype = _LogicalResult
            lib.mlirGARunPipelineWithDiagnostics.argtypes = [
                _StringRef, _StringRef, _StringRef, _StringCallback,
                _DiagnosticCallback, ctypes.c_void_p]
            lib.mlirGARunPipelineWithDiagnostics.restype = _LogicalResult
            lib.mlirGAInspectFunction.argtypes = [
                _StringRef, _StringRef, _StringRef,
                ctypes.POINTER(_FunctionInfo), _TypeCallback, _StringCallback,
                ctypes.c_void_p]
            lib.mlirGAInspectFunction.restype = _LogicalResult
            lib.mlirGADrawInputs.argtypes = [
                _StringRef, _StringRef, _StringRef, ctypes.c_uint64,
                ctypes.c_int64, _ArrayCallback, _StringCallback,
                ctypes.c_void_p]
            lib.mlirGADrawInputs.restype = _LogicalResult
            lib.mlirGARewriteGpuObjects.argtypes = [
                _StringRef, _StringRef, _GpuObjectCallback, _StringCallback,
                _StringCallback, ctypes.c_void_p,
                ctypes.POINTER(ctypes.c_ssize_t)]
            lib.mlirGARewriteGpuObjects.restype = _LogicalResult
            lib.mlirGAVerifyToleranceRule.argtypes = [
                ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_double),
                ctypes.POINTER(ctypes.c_double)]
            lib.mlirGAVerifyToleranceRule.restype = None
            lib.mlirGAVerifyOptionsInit.argtypes = [
                ctypes.POINTER(_VerifyOptions)]
            lib.mlirGAVerifyOptionsInit.restype = None
            lib.mlirGAVerify.argtypes = [
                _StringRef, ctypes.POINTER(_VerifyOptions), _StringCallback,
                ctypes.c_void_p]
            lib.mlirGAVerify.restype = ctypes.c_int
            _library = lib
        return _library


def _collector(decode=True):
    """A list and a _StringCallback that appends each string it is given
    (decoded, or as bytes) to it."""
    collected = []

    def on_string(ref, _):
        data = ctypes.string_at(ref.data, ref.length)
        collected.append(data.decode("utf-8", "replace") if decode else data)

    return collected, _StringCallback(on_string)


def _diagnostic_collector():
    """A list and a _DiagnosticCallback that appends each diagnostic it is
    given to it, as a Diagnostic."""
    collected = []

    def text(ref):
        return ctypes.string_at(ref.data, ref.length).decode("utf-8",
                                                             "replace")

    def on_diagnostic(pointer, _):
        d = pointer.contents
        collected.append(Diagnostic(
            text(d.rendered), _SEVERITIES[d.severity], text(d.code) or None,
            text(d.file) or None, d.line, d.column, text(d.message)))

    return collected, _DiagnosticCallback(on_diagnostic)


def _file_name_ref(filename):
    """The buffer and _StringRef of the name diagnostics give the input."""
    return _string_ref(
        os.fsencode(filename) if filename is not None else b"<input>")


def _string_ref(data):
    buffer = ctypes.create_string_buffer(data, len(data))
    return buffer, _StringRef(ctypes.cast(buffer, ctypes.c_void_p), len(data))


def run_pipeline(ir, pipeline, filename=None):
    """Parses `ir`, runs the textual pass pipeline `pipeline` and returns the
    resulting module as text. Raises PipelineError with the diagnostics if
    anything fails; they are located in `filename` (the file `ir` was read
    from; default `<input>`)."""
    if not isinstance(ir, str) or not isinstance(pipeline, str):
        raise TypeError("run_pipeline(ir: str, pipeline: str, filename=None): "
                        f"got ir: {type(ir).__name__}, pipeline: "
                        f"{type(pipeline).__name__}")
    if filename is not None and not isinstance(filename, (str, os.PathLike)):
        raise TypeError("run_pipeline: filename must be a path, got "
                        f"{type(filename).__name__}")
    lib = _load()
    output, output_callback = _collector(decode=False)
    diagnostics, diagnostic_callback = _diagnostic_collector()
    ir_buffer, ir_ref = _string_ref(ir.encode("utf-8"))
    pipeline_buffer, pipeline_ref = _string_ref(pipeline.encode("utf-8"))
    name_buffer, name_ref = _file_name_ref(filename)
    result = lib.mlirGARunPipelineWithDiagnostics(
        ir_ref, name_ref, pipeline_ref, output_callback, diagnostic_callback,
        None)
    del ir_buffer, pipeline_buffer, name_buffer
    if not result.value:
        raise PipelineError(diagnostics)
    for diagnostic in diagnostics:
        warnings.warn(diagnostic.rstrip("\n"), GADiagnosticWarning,
                      stacklevel=2)
    return b"".join(output).decode("utf-8")


def function_info(ir, name, filename=None):
    """What the function `name` of the module `ir` declares (FunctionInfo),
    read from the parsed IR through the C API (any function op: func.func,
    llvm.func). Raises PipelineError with a located diagnostic when `ir`
    does not parse or has no such function."""
    if not isinstance(ir, str) or not isinstance(name, str):
        raise TypeError("function_info(ir: str, name: str): got ir: "
                        f"{type(ir).__name__}, name: {type(name).__name__}")
    lib = _load()
    types = ([], [])
    structured = ([], [])

    def on_type(is_result, ref, element, rank, shape, _):
        types[is_result].append(
            ctypes.string_at(ref.data, ref.length).decode("utf-8"))
        sizes = None if rank < 0 else tuple(
            None if shape[i] == -2**63 else shape[i] for i in range(rank))
        structured[is_result].append(ValueType(
            sizes, ctypes.string_at(element.data,
                                    element.length).decode("utf-8")))

    type_callback = _TypeCallback(on_type)
    diagnostics, diagnostic_callback = _collector()
    ir_buffer, ir_ref = _string_ref(ir.encode("utf-8"))
    name_buffer, name_ref = _string_ref(name.encode("utf-8"))
    file_buffer, file_ref = _file_name_ref(filename)
    info = _FunctionInfo()
    result = lib.mlirGAInspectFunction(ir_ref, file_ref, name_ref,
                                       ctypes.byref(info), type_callback,
                                       diagnostic_callback, None)
    del ir_buffer, name_buffer, file_buffer
    if not result.value:
        raise PipelineError(diagnostics)
    assert len(types[0]) == info.num_arguments
    assert len(types[1]) == info.num_results
    return FunctionInfo(types[0], types[1],
                        None if info.micro_batches < 0 else
                        info.micro_batches, structured[0], structured[1])


def rewrite_gpu_objects(ir, replace, filename=None):
    """The module `ir` (text) with the objects of its gpu.binary ops that
    `replace(GpuObject)` returns bytes for replaced by fatbins of those bytes
    (same target, properties and kernels), and the number replaced; read and
    rebuilt through the parsed IR (the C API mlirGARewriteGpuObjects), never
    as text. `replace` returns None to keep an object; an exception it
    raises propagates. PipelineError when `ir` does not parse."""
    lib = _load()
    output, output_callback = _collector(decode=False)
    diagnostics, diagnostic_callback = _collector()
    ir_buffer, ir_ref = _string_ref(ir.encode("utf-8"))
    name_buffer, name_ref = _file_name_ref(filename)
    kept, raised = [], []

    def on_object(view, fatbin, _):
        o = view.contents

        def text(ref):
            return ctypes.string_at(ref.data, ref.length).decode("utf-8")

        try:
            data = replace(GpuObject(text(o.binary), text(o.target),
                                     text(o.format),
                                     ctypes.string_at(o.data.data,
                                                      o.data.length)))
        except BaseException as error:  # re-raised after the C call
            raised.append(error)
            return 0
        if data:
            buffer, ref = _string_ref(bytes(data))
            kept.append(buffer)
            fatbin[0] = ref
        return 1

    count = ctypes.c_ssize_t(0)
    result = lib.mlirGARewriteGpuObjects(
        ir_ref, name_ref, _GpuObjectCallback(on_object), output_callback,
        diagnostic_callback, None, ctypes.byref(count))
    del ir_buffer, name_buffer, kept
    if raised:
        raise raised[0]
    if not result.value:
        raise PipelineError(diagnostics)
    return b"".join(output).decode("utf-8"), count.value


def draw_inputs(ir, func=None, seed=0, dynamic_size=19, filename=None):
    """The input set `seed` of the step `func` (None: the one ga-verify
    picks) of the module `ir`, drawn exactly as `ga-verify --seed=<seed>`
    draws it: per each argument's `ga.init` / `ga.range`, else by element
    type; dynamic dimensions of size `dynamic_size`. A list of DrawnInput,
    one per argument. Raises PipelineError with a located diagnostic when
    `ir` does not parse, has no such step or an argument cannot be drawn."""
    if not isinstance(ir, str):
        raise TypeError(f"draw_inputs(ir: str, ...): got {type(ir).__name__}")
    for name, value, low in (("seed", seed, 0), ("dynamic_size", dynamic_size, 1)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"draw_inputs: {name} must be an int, got {type(value).__name__}")
        if value < low:
            raise ValueError(f"draw_inputs: {name} must be at least {low}, got {value}")
    lib = _load()
    drawn = []

    def on_array(index, type_ref, rank, shape, data, num_bytes, _):
        assert index == len(drawn)
        drawn.append(DrawnInput(
            ctypes.string_at(type_ref.data, type_ref.length).decode("utf-8"),
            tuple(shape[i] for i in range(rank)),
            ctypes.string_at(data, num_bytes) if num_bytes else b""))

    array_callback = _ArrayCallback(on_array)
    diagnostics, diagnostic_callback = _collector()
    ir_buffer, ir_ref = _string_ref(ir.encode("utf-8"))
    name_buffer, name_ref = _string_ref((func or "").encode("utf-8"))
    file_buffer, file_ref = _file_name_ref(filename)
    result = lib.mlirGADrawInputs(ir_ref, file_ref, name_ref, seed, dynamic_size,
                                  array_callback, diagnostic_callback, None)
    del ir_buffer, name_buffer, file_buffer
    if not result.value:
        raise PipelineError(diagnostics)
    return drawn


def tolerance_rule():
    """ga-verify's rule for an element's derived tolerance, as
    (perturbed runs, bounds per comparison, spreads per comparison): the
    tolerance is min(bounds * bound, spreads * spread), the spread the
    largest distance from the reference over that many runs with perturbed
    roundings (mlirGAVerifyToleranceRule; tools/ga-verify/README.md)."""
    lib = _load()
    runs = ctypes.c_uint32()
    bounds, spreads = ctypes.c_double(), ctypes.c_double()
    lib.mlirGAVerifyToleranceRule(ctypes.byref(runs), ctypes.byref(bounds),
                                  ctypes.byref(spreads))
    return runs.value, bounds.value, spreads.value


def verify(path_or_text, micro_batches=4, pipeline=None, seeds=3, seed=0,
           rtol=None, atol=0.0, func=None, lower_options=None):
    """Verifies a rewrite of the training step in `path_or_text` (a path to
    an .mlir file, or the IR text itself), as `ga-verify --json` does: the
    step as written and after `pipeline` (default
    `ga-accumulate{micro-batches=N}`) run on `seeds` seeded input sets from
    `seed`, every result compared (`rtol` by element type unless given).

    Returns the report as a dict: `pass` (every result matched), `error`
    (why the step could not be verified, if so), `results` (per result the
    worst comparison over the input sets), `seeds`, `time`, ... Runs in a
    child process: a crash is reported in `error`, not fatal."""
    if not isinstance(path_or_text, str):
        raise TypeError("verify(path_or_text: str, ...): got "
                        f"{type(path_or_text).__name__}")
    for name, value, low in (("micro_batches", micro_batches, 1),
                             ("seeds", seeds, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"verify: {name} must be an int, got "
                            f"{type(value).__name__}")
        if value < low:
            raise ValueError(f"verify: {name} must be at least {low}, got "
                             f"{value}")
    text, name = path_or_text, None
    if "\n" not in path_or_text and os.path.isfile(path_or_text):
        with open(path_or_text, encoding="utf-8") as f:
            text = f.read()
        name = path_or_text
    lib = _load()
    options = _VerifyOptions()
    lib.mlirGAVerifyOptionsInit(ctypes.byref(options))
    options.micro_batches = int(micro_batches)
    options.seed = int(seed)
    options.num_seeds = int(seeds)
    options.rtol = -1.0 if rtol is None else float(rtol)
    options.atol = float(atol)
    keep = []  # the buffers must outlive the call

    def set_string(field, value):
        if value:
            buffer, ref = _string_ref(value.encode("utf-8"))
            keep.append(buffer)
            setattr(options, field, ref)

    set_string("pipeline", pipeline)
    set_string("func_name", func)
    set_string("lower_options", lower_options)
    set_string("input_name", name)
    report = []

    def on_report(ref, _):
        report.append(ctypes.string_at(ref.data, ref.length))

    callback = _StringCallback(on_report)
    text_buffer, text_ref = _string_ref(text.encode("utf-8"))
    lib.mlirGAVerify(text_ref, ctypes.byref(options), callback, None)
    del text_buffer, keep
    return json.loads(b"".join(report).decode("utf-8"))
