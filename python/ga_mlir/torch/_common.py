"""What the modules of ga_mlir.torch share."""

import logging
import os

# make_fx imports torch.utils.flop_counter, which warns that triton (a GPU
# compiler torch does not need here) is missing.
logging.getLogger("torch.utils.flop_counter").setLevel(logging.ERROR)

LLVM_BIN = os.environ.get("GA_LLVM_BIN", "/usr/lib/llvm-22/bin")


class CompileError(RuntimeError):
    """The step cannot be compiled exactly: unsupported model, optimizer or
    option, or a refusal of `--ga-accumulate` (located at the user's line)."""
