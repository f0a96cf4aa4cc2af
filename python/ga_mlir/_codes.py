"""The stable codes of the refusals that ga_mlir's Python side raises itself
(ga_mlir.aot's command line, the PyTorch frontend ga_mlir.torch), declared
once here; the compiler's own codes are declared in
include/ga/IR/DiagnosticCodes.def and reach Python on its diagnostics
(`Diagnostic.code`).

Every `CompileError` carries a code: one of FRONTEND_CODES, or the code of
one of the compiler's diagnostics it carries. A code is one family of
refusals, named by what the user must do about it, not one raise site: the
wording of a message is free to change, its code is not. Append new codes;
never rename or reuse one. The PyTorch-level advice of each code is in
ga_mlir.torch._locations.ADVICE (test/python/torch/torch-refusals.py checks
that every code has advice and that no code is declared both here and in
DiagnosticCodes.def).

This is a Python table rather than a second section of DiagnosticCodes.def
because the installed package has no include/ tree to read it from, and no
C++ code emits these codes."""

# {code: the family of refusals it names}.
FRONTEND_CODES = {
    "compiler-refused":
        "the compiler refused the step with diagnostics that carry no code",
    "tool-failed":
        "a tool of the chain (clang, llc, ptxas, fatbinary) failed, or its "
        "output could not be read",
    "toolchain-missing":
        "ga-opt, a CUDA tool or a runtime library of the build is missing",
    "no-cuda-device":
        "a CUDA step called on a machine without a CUDA device",
    "invalid-argument":
        "an argument or option whose value is not one the frontend takes",
    "options-contradict":
        "options that cannot be given together",
    "file-unreadable":
        "a file (input, saved step, library) that cannot be read",
    "process-group-mismatch":
        "a step that needs a torch.distributed process group and none is "
        "initialized, or the other way round",
    "ranks-disagree":
        "the ranks of a data-parallel step compiled different steps",
    "too-few-samples":
        "a micro-batch or a rank that would hold no sample",
    "inputs-batch-disagree":
        "example inputs whose batch sizes differ",
    "tensor-placement":
        "tensors on another device than the step's target, or of a dtype "
        "the step does not take",
    "storage-layout":
        "parameters or states that share storage or are not contiguous",
    "step-signature-mismatch":
        "a model, optimizer, state or input other than the compiled (or "
        "saved) step's",
    "saved-step-format":
        "a saved step written by another version of ga_mlir",
    "save-not-supported":
        "a step whose kind cannot be saved yet",
    "unsupported-optimizer":
        "an optimizer, or an optimizer's setting, that the compiled step "
        "cannot run",
    "optimizer-not-traceable":
        "an optimizer whose step fails, or changes, when traced",
    "optimizer-state-mismatch":
        "an optimizer state that is not the one its step keeps",
    "trace-failed":
        "PyTorch cannot trace the forward or the step",
    "import-failed":
        "torch-mlir cannot lower the traced step to linalg-on-tensors",
    "random-draw-unsupported":
        "random numbers that the compiled step cannot draw as PyTorch does",
    "data-dependent-size":
        "a size computed from the data, used where the step needs it fixed",
    "batch-norm-training":
        "BatchNorm in training mode without recompute_statistics=True",
    "unsupported-layer":
        "a layer (nn.Module) with options that the compiled step does not "
        "support",
    "unsupported-operation":
        "a PyTorch operation, or one of its forms, that is not compiled",
    "moe-routing":
        "a mixture-of-experts routing that the frontend cannot prove "
        "per-token",
    "in-place-write":
        "a write in place into a buffer or an argument that the step would "
        "lose",
    "autograd-function-form":
        "an autograd.Function written in a form that cannot be traced",
    "loss-fn-result":
        "loss_fn returns something other than a loss and tensor metrics",
    "internal-error":
        "a state the frontend does not expect (a bug of ga_mlir)",
    "checkpoint-option":
        "a torch.utils.checkpoint option whose meaning the compiled step "
        "cannot keep (context_fn=, preserve_rng_state=False around random "
        "draws)",
}


def first_code(diagnostics):
    """The code of the first error among `diagnostics` that has one, or
    None."""
    return next((d.code for d in diagnostics
                 if getattr(d, "severity", None) == "error" and
                 getattr(d, "code", None)), None)


# Codes of DiagnosticCodes.def that the frontend raises itself, for a
# refusal of the same family that it finds before or after the compiler (a
# budget that no data-parallel step fits, measured by the frontend from the
# compiled steps' reports: the compiler's own budget-not-met). A caller keys
# its handling on the family, whoever found it. torch-refusals.py checks that
# each is declared in DiagnosticCodes.def.
SHARED_COMPILER_CODES = frozenset({"budget-not-met"})


def compiler_code(diagnostics):
    """The code of a refusal made of the compiler's `diagnostics`: that of
    the first error with one, else "compiler-refused"."""
    return first_code(diagnostics) or "compiler-refused"


class CodedError(RuntimeError):
    """A refusal with its stable `code` and the compiler's `diagnostics`
    (ga_mlir.Diagnostic, each with its own code; empty for a refusal of the
    Python side). `code` is required and must be declared: one of
    FRONTEND_CODES or SHARED_COMPILER_CODES, or the code of one of
    `diagnostics` (declared in DiagnosticCodes.def); anything else is a ValueError, so that a raise
    without a declared code fails wherever a test reaches it."""

    def __init__(self, message, code, diagnostics=()):
        diagnostics = list(diagnostics)
        if code not in FRONTEND_CODES and \
                code not in SHARED_COMPILER_CODES and not any(
                getattr(d, "code", None) == code for d in diagnostics):
            raise ValueError(f"undeclared refusal code {code!r} (declare it "
                             "in ga_mlir._codes.FRONTEND_CODES)")
        super().__init__(message)
        self.code = code
        self.diagnostics = diagnostics

    def __reduce__(self):
        # Rebuilt with its code (pickle calls the class with `args` only):
        # a refusal crossing processes (torch.multiprocessing) keeps it.
        return type(self), (str(self), self.code, self.diagnostics)
