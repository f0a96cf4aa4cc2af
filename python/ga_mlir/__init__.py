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

`pipeline` is a textual pass pipeline as `ga-opt --pass-pipeline` takes it,
with or without the `builtin.module(...)` anchor. Errors raise
`PipelineError` carrying the located diagnostics; warnings and remarks of a
successful run are issued as Python warnings (`GADiagnosticWarning`).

The library is found next to the package (build and install trees have the
same layout) or at the path in the environment variable GA_CAPI_LIBRARY.
"""

import ctypes
import json
import os
import threading
import warnings

__all__ = ["run_pipeline", "verify", "PipelineError", "GADiagnosticWarning",
           "library_path"]


class PipelineError(RuntimeError):
    """Parsing the input, parsing the pipeline or running a pass failed.

    `diagnostics` is the list of diagnostics in the order they were emitted,
    each the located text ga-opt would print (`<input>:3:7: error: ...`).
    """

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)
        message = "\n".join(d.rstrip("\n") for d in self.diagnostics)
        super().__init__(message or "pass pipeline failed")


class GADiagnosticWarning(UserWarning):
    """A warning or remark emitted by a pipeline that succeeded."""


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]


class _LogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


_StringCallback = ctypes.CFUNCTYPE(None, _StringRef, ctypes.c_void_p)


class _VerifyOptions(ctypes.Structure):
    """MlirGAVerifyOptions of include/ga-c/Verify.h."""
    _fields_ = [("micro_batches", ctypes.c_int64),
                ("seed", ctypes.c_uint64),
                ("num_seeds", ctypes.c_uint32),
                ("rtol", ctypes.c_double),
                ("atol", ctypes.c_double),
                ("pipeline", _StringRef),
                ("func_name", _StringRef),
                ("lower_options", _StringRef)]

_lock = threading.Lock()
_library = None


def library_path():
    """The path of libGACAPI.so this package loads."""
    override = os.environ.get("GA_CAPI_LIBRARY")
    if override:
        return override
    from . import _config
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, _config.CAPI_LIBRARY_RELPATH))


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
                    f"{error} (build the GACAPI target, or set "
                    f"GA_CAPI_LIBRARY)") from error
            lib.mlirGARunPipeline.argtypes = [
                _StringRef, _StringRef, _StringCallback, _StringCallback,
                ctypes.c_void_p]
            lib.mlirGARunPipeline.restype = _LogicalResult
            lib.mlirGAVerifyOptionsInit.argtypes = [
                ctypes.POINTER(_VerifyOptions)]
            lib.mlirGAVerifyOptionsInit.restype = None
            lib.mlirGAVerify.argtypes = [
                _StringRef, ctypes.POINTER(_VerifyOptions), _StringCallback,
                ctypes.c_void_p]
            lib.mlirGAVerify.restype = ctypes.c_int
            _library = lib
        return _library


def _string_ref(data):
    buffer = ctypes.create_string_buffer(data, len(data))
    return buffer, _StringRef(ctypes.cast(buffer, ctypes.c_void_p), len(data))


def run_pipeline(ir, pipeline):
    """Parses `ir`, runs the textual pass pipeline `pipeline` and returns the
    resulting module as text. Raises PipelineError with the diagnostics if
    anything fails."""
    if not isinstance(ir, str) or not isinstance(pipeline, str):
        raise TypeError("run_pipeline(ir: str, pipeline: str)")
    lib = _load()
    output = []
    diagnostics = []

    def on_output(ref, _):
        output.append(ctypes.string_at(ref.data, ref.length))

    def on_diagnostic(ref, _):
        diagnostics.append(
            ctypes.string_at(ref.data, ref.length).decode("utf-8", "replace"))

    output_callback = _StringCallback(on_output)
    diagnostic_callback = _StringCallback(on_diagnostic)
    ir_buffer, ir_ref = _string_ref(ir.encode("utf-8"))
    pipeline_buffer, pipeline_ref = _string_ref(pipeline.encode("utf-8"))
    result = lib.mlirGARunPipeline(ir_ref, pipeline_ref, output_callback,
                                   diagnostic_callback, None)
    del ir_buffer, pipeline_buffer
    if not result.value:
        raise PipelineError(diagnostics)
    for diagnostic in diagnostics:
        warnings.warn(diagnostic.rstrip("\n"), GADiagnosticWarning,
                      stacklevel=2)
    return b"".join(output).decode("utf-8")


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
        raise TypeError("verify(path_or_text: str, ...)")
    text = path_or_text
    if "\n" not in path_or_text and os.path.isfile(path_or_text):
        with open(path_or_text, encoding="utf-8") as f:
            text = f.read()
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
    report = []

    def on_report(ref, _):
        report.append(ctypes.string_at(ref.data, ref.length))

    callback = _StringCallback(on_report)
    text_buffer, text_ref = _string_ref(text.encode("utf-8"))
    lib.mlirGAVerify(text_ref, ctypes.byref(options), callback, None)
    del text_buffer, keep
    return json.loads(b"".join(report).decode("utf-8"))
