"""What the modules of ga_mlir.torch share."""

import contextlib
import logging
import os

from .._codes import CodedError

# make_fx imports torch.utils.flop_counter, which warns that triton (a GPU
# compiler torch does not need here) is missing.
logging.getLogger("torch.utils.flop_counter").setLevel(logging.ERROR)

LLVM_BIN = os.environ.get("GA_LLVM_BIN", "/usr/lib/llvm-22/bin")


class CompileError(CodedError):
    """The step cannot be compiled exactly: unsupported model, optimizer or
    option, or a refusal of `--ga-accumulate` (located at the user's line).

    `code` (required) is the refusal's stable code: the compiler's (the
    first error with one: "batch-coupling", see
    include/ga/IR/DiagnosticCodes.def) or the frontend's
    (ga_mlir._codes.FRONTEND_CODES: "unsupported-optimizer"); an undeclared
    one is a ValueError. `diagnostics` are the compiler's diagnostics
    (ga_mlir.Diagnostic, each with its `code`), empty for a refusal of the
    frontend itself."""


@contextlib.contextmanager
def patched_forwards(forwards):
    """While tracing: `module.forward = forward` for each (module, forward)
    pair of `forwards`, removed afterwards so that the class's own forward
    shows through again."""
    patched = []
    try:
        for module, forward in forwards:
            module.forward = forward
            patched.append(module)
        yield
    finally:
        for module in patched:
            del module.forward
