"""Importing a traced step with torch-mlir: its FX importer and lowering to
linalg-on-tensors, and its failures (and the ops of its own dialect that
ga-mlir does not take) as refusals at the user's line, in PyTorch's
words."""

from ._common import CompileError
from ._locations import UNLOCATED
from ._mlir_locations import (describe_location, first_location,
                              location_frames,
                              locate_failures, pytorch_operation)


def _refuse_tm_tensor_ops(module):
    """Refuses torch-mlir's own dialect for ops linalg has no form of
    (scatter, sort, ...): ga-mlir takes upstream dialects only."""
    foreign = sorted(_op_names(module, "tm_tensor.") - {"tm_tensor.yield"})
    if foreign:
        raise CompileError(
            f"{first_location(module.operation, 'tm_tensor.')}: error: "
            "torch-mlir lowers the PyTorch operation of this line (or its "
            "backward) to " + " and ".join(
                _TM_TENSOR_WORDS.get(name, name) for name in foreign) +
            ", which ga-mlir does not compile: write it without them "
            "(a one-hot product or torch.where instead of a write by index, "
            "a reduction instead of a sort) (torch-mlir: "
            f"{', '.join(foreign)})",
            code="unsupported-operation")


# What torch-mlir's tm_tensor ops come from, in PyTorch's words.
_TM_TENSOR_WORDS = {
    "tm_tensor.scatter": "a write by index (x[idx] = v, index_put_, "
                         "index_fill, scatter, scatter_reduce, or the "
                         "backward of max/min over a dimension or of x[idx] "
                         "other than at the sample's own position)",
    "tm_tensor.sort": "a sort (torch.sort, topk, argsort, median, "
                      "kthvalue)",
    "tm_tensor.scan": "a scan (torch.cumsum, cumprod, cummax)",
}


def _op_names(module, prefix):
    """The names of the ops of `module` (torch-mlir's MLIR Python API) that
    start with `prefix`."""
    from torch_mlir import ir

    names = set()

    def visit(op):
        if op.name.startswith(prefix):
            names.add(op.name)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return names


def _import_graphs(importer, graphs):
    """stateless_fx_import of several graphs into one module: each graph
    (a (graph, function name) pair) imported by `importer`, then its
    module lowered in place by torch-mlir's pipelines."""
    from torch_mlir.fx import OutputType, _module_lowering
    from torch_mlir.compiler_utils import BackendLoweringOptions

    for graph, name in graphs:
        importer.import_stateless_graph(graph, func_name=name)
    return _module_lowering(
        False, False, OutputType.LINALG_ON_TENSORS, importer.module,
        backend_options=BackendLoweringOptions(allow_non_finites=True))


def _located_importer(context):
    """torch-mlir's FxImporter, but for the location of each imported
    function: the first node's location with a file line, where the
    importer takes the first node's whatever it is. A graph whose first
    nodes carry an empty stack (placeholders of a rewritten graph: the
    recurrences of _recurrence) would otherwise give the function an
    unknown location, and a refusal at the function (a byte budget nothing
    fits) would name no line of the model."""
    from torch_mlir.extras.fx_importer import FxImporter

    class LocatedImporter(FxImporter):
        def _graph_to_function_meta(self, g):
            ftype, loc = super()._graph_to_function_meta(g)
            if loc is None or not location_frames(loc):
                for node in g.nodes:
                    found = self._cc.get_node_location(node)
                    if found is not None and location_frames(found):
                        return ftype, found
            return ftype, loc

    return LocatedImporter(context=context)


def _import_to_linalg(gm, graphs=None):
    """torch-mlir's own FX import and lowering to linalg-on-tensors
    (torch_mlir.fx.stateless_fx_import: its importer and its pipelines,
    whatever they are in the installed version), with the located
    diagnostics of a failure in the exception. With `graphs` ((graph,
    function name) pairs), those graphs into one module instead."""
    from torch_mlir import ir
    from torch_mlir.compiler_utils import TorchMlirCompilerError
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.fx import stateless_fx_import

    # Our context, so that a failure's diagnostics reach us with their
    # locations: torch-mlir emits them to stderr and reports the failure as
    # text only.
    context = ir.Context()
    torch_dialect.register_dialect(context)
    # A step imported in parts (_rolled) gets ops of ga-mlir's own dialect
    # (ga.grouped_matmul), which torch-mlir's context does not know.
    context.allow_unregistered_dialects = graphs is not None
    errors = []

    def collect(diagnostic):
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            errors.append((diagnostic.location, str(diagnostic.message)))
        return True  # handled: not printed

    handler = context.attach_diagnostic_handler(collect)
    importer = _located_importer(context)  # lowered in place
    try:
        if graphs is None:
            module = stateless_fx_import(
                gm, output_type="linalg-on-tensors", model_name="train_step",
                fx_importer=importer, allow_non_finites=True)
        else:
            module = _import_graphs(importer, graphs)
        with context:
            module.operation.verify()
    except (TorchMlirCompilerError, ir.MLIRError) as error:
        if isinstance(error, ir.MLIRError):
            errors += [(d.location, d.message)
                       for d in error.error_diagnostics]
        if not errors:
            raise CompileError(
                "torch-mlir could not lower the step to linalg-on-tensors: " +
                str(error).strip().splitlines()[0],
                code="import-failed") from None
        raise _lowering_error(errors, locate_failures(
            errors, importer.module)) from None
    finally:
        handler.detach()
    return module


def _lowering_error(errors, located):
    """torch-mlir's failure (its (location, message) errors, and each one's
    (location, PyTorch operation) from locate_failures) at the user's (or
    library's) line, in words that say what it means for the model;
    torch-mlir's own words are quoted, not read."""
    lines = []
    for (_, message), (location, operation) in zip(errors, located):
        where = describe_location(location)
        what = "of this line (or of its backward)" if where != UNLOCATED \
            else "that it gives no line (named in its words)"
        lines.append(f"{where}: error: torch-mlir cannot lower "
                     f"{pytorch_operation(operation)}the PyTorch operation "
                     f"{what}, to linalg: rewrite it with other "
                     "operations, or report it (torch-mlir: "
                     f"{message.splitlines()[0]})")
    return CompileError("torch-mlir could not lower the step to "
                        "linalg-on-tensors:\n" + "\n".join(lines),
                        code="import-failed")
