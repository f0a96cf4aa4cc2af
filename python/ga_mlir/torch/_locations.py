"""Where a problem is, in the user's terms: the user's (or a library's)
file and line from a traced node's Python stack trace, without the frames
of torch and ga_mlir. Frames are read as data (traceback.FrameSummary):
from the running stack or a traceback as Python gives them, and from an FX
node's recorded stack trace, which PyTorch keeps only as text
(node.meta["stack_trace"], pytorch/pytorch#91000), by one reader,
_parse_stack_trace. torch-mlir's locations are read in _mlir_locations."""

import functools
import os
import sys
import traceback

import torch


# Frames in these are not the user's (ga_mlir and torch).
_PACKAGE_DIRS = (
    os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))) + os.sep,
    os.path.dirname(os.path.abspath(torch.__file__)) + os.sep)


# The frame where the traced step enters the user's loss function
# (_export._LossModule.forward): frames outside it are the caller's
# (compile_train_step's), not the step's.
_ENTRY = (os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "_export.py"), "forward")


def _foreign(filename):
    """Whether a frame of `filename` is not the user's: torch's, torch-mlir's,
    ga_mlir's or generated code's ("<eval_with_key>")."""
    path = os.path.abspath(filename)
    return filename.startswith("<") or path.startswith(_PACKAGE_DIRS) or \
        os.sep + "torch_mlir" + os.sep in path


@functools.lru_cache(maxsize=None)
def kept_frame(filename, name):
    """Whether _user_frames can use a frame of `filename` in function
    `name`: the user's (outside torch, torch-mlir and ga_mlir) or the
    step's entry into the loss function. Tracing records only these (see
    _export._trace): formatting the others' source lines for every node
    of the graph was a good part of the trace's time."""
    return (os.path.abspath(filename), name) == _ENTRY or \
        not _foreign(filename)


def _parse_stack_trace(stack_trace):
    """The frames (traceback.FrameSummary, outermost first) of a stack
    trace in traceback's format ('  File "f", line N, in name' then the
    source line, as PyTorch records a node's): the one reader of that
    text."""
    start = '  File "'
    frames = []
    for line in (stack_trace or "").splitlines():
        if line.startswith(start):
            filename, _, rest = line[len(start):].rpartition('", line ')
            number, _, name = rest.partition(", in ")
            if filename and number.isdigit():
                frames.append([filename, int(number), name, ""])
        elif frames and not frames[-1][3] and line.startswith("    "):
            frames[-1][3] = line.strip()  # the source line; not the carets
    return [traceback.FrameSummary(f, n, name, lookup_line=False, line=text)
            for f, n, name, text in frames]


def _running_frames():
    """The frames of the running Python stack, outermost first (without
    their source lines: only files and lines are read)."""
    return list(reversed(traceback.StackSummary.extract(
        traceback.walk_stack(sys._getframe()), lookup_lines=False)))


def _user_frames(frames, inside_step=False):
    """The frames (FrameSummary, outermost first) outside torch and ga_mlir.
    With `inside_step`, only those inside the step's call of the user's
    loss function (none if the stack does not pass through it: an
    operation of the backward or of the optimizer)."""
    for i in reversed(range(len(frames))):
        if (os.path.abspath(frames[i].filename), frames[i].name) == _ENTRY:
            frames = frames[i + 1:]
            break
    else:
        if inside_step:
            return []
    return [frame for frame in frames if not _foreign(frame.filename)]


def _innermost(frames):
    """file:line of the last of `frames`, or None."""
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def _innermost_user_line(stack_trace):
    """file:line of the innermost user's frame of a node's recorded stack
    trace (text), or None."""
    return _innermost(_user_frames(_parse_stack_trace(stack_trace)))


def traceback_user_line(tb):
    """file:line of the innermost user's frame of an exception's traceback,
    or None."""
    return _innermost(_user_frames(list(traceback.StackSummary.extract(
        traceback.walk_tb(tb), lookup_lines=False))))


def current_user_line():
    """file:line of the innermost frame of the running Python stack outside
    torch and ga_mlir (the model's line that is being traced), or
    UNLOCATED."""
    return _innermost(_user_frames(_running_frames())) or UNLOCATED


def current_step_line(backward_of=None):
    """file:line of the innermost frame of the running Python stack inside
    the traced step's call of the loss function (the model's line being
    traced); in PyTorch's backward, which runs without the model's frames,
    "the backward of `backward_of`" (UNLOCATED without it)."""
    where = _innermost(_user_frames(_running_frames(), inside_step=True)
                       or _backward_frames())
    if where:
        return where
    return (f"the model's backward of {backward_of} (no line: PyTorch runs "
            "the backward without the model's frames)") if backward_of \
        else UNLOCATED


def _backward_frames():
    """While PyTorch's backward is traced: the user's frames of the forward
    operation it differentiates, by locate_graph's rule (the node of the
    graph being traced with the smallest autograd sequence number at or
    after the one preserve_backward_locations recorded), or []."""
    import torch.fx.traceback as fx_traceback
    from torch.fx.experimental.proxy_tensor import get_proxy_mode

    numbers = fx_traceback.current_meta.get("grad_fn_seq_nr")
    mode = get_proxy_mode()
    if not numbers or mode is None:
        return []
    best = None
    for node in mode.tracer.graph.nodes:
        nr = node.meta.get("seq_nr", -1)
        if nr >= numbers[-1] and node.meta.get("stack_trace") and \
                (best is None or nr < best[0]):
            best = (nr, node.meta["stack_trace"])
    return _user_frames(_parse_stack_trace(best[1]), inside_step=True) \
        if best else []


def preserve_backward_locations(loss):
    """While tracing: hooks on the autograd graph of `loss` that tag each
    operation of the backward with the sequence number of the autograd node
    it runs for (torch.fx.traceback's grad_fn_seq_nr, as AOTAutograd does),
    so that locate_backward can give it the line of its forward
    operation. Needs torch.fx.traceback.preserve_node_meta() around the
    trace."""
    import collections
    import torch.fx.traceback as fx_traceback

    def prehook(nr):
        def hook(grad_outputs):
            fx_traceback.set_grad_fn_seq_nr(nr)
        return hook

    def posthook(grad_inputs, grad_outputs):
        fx_traceback.reset_grad_fn_seq_nr()

    seen, queue = set(), collections.deque([loss.grad_fn])
    while queue:
        node = queue.popleft()
        if node is None or node in seen:
            continue
        seen.add(node)
        queue.extend(fn for fn, _ in node.next_functions)
        node.register_prehook(prehook(node._sequence_nr()))
        node.register_hook(posthook)


def locate_graph(graph):
    """Every node's stack trace reduced to the user's frames; a node
    without one (an operation of the backward, whose Python stack is
    autograd's) gets the frames of the forward operation it differentiates:
    the node with the smallest autograd sequence number at or after its
    own (an autograd node's number is taken when its forward operation runs,
    just before the forward node's own)."""
    import bisect
    forward = []
    for node in graph.nodes:
        if "stack_trace" in node.meta:
            # Kept as text in traceback's format: torch-mlir's importer
            # reads its frames into the op's location.
            node.meta["stack_trace"] = "".join(traceback.format_list(
                _user_frames(_parse_stack_trace(node.meta["stack_trace"]),
                             inside_step=True)))
        if node.meta.get("stack_trace") and node.meta.get("seq_nr", -1) >= 0:
            forward.append((node.meta["seq_nr"], node.meta["stack_trace"]))
    forward.sort(key=lambda entry: entry[0])
    keys = [k for k, _ in forward]
    for node in graph.nodes:
        nr = node.meta.get("seq_nr", -1)
        if node.meta.get("stack_trace") or nr < 0 or node.op != \
                "call_function":
            continue
        i = bisect.bisect_left(keys, nr)
        if i < len(forward):
            node.meta["stack_trace"] = forward[i][1]
    _locate_from_neighbours(graph)


def _locate_from_neighbours(graph, limit=256):
    """A node that still has no user's frame gets those of the nearest node
    that has one along its uses, then its operands (breadth first, users
    before operands at each distance, at most `limit` nodes looked at):
    operations that run without the model's frames and without an autograd
    node of their own, such as the sum that autograd's engine makes of a
    tensor's gradients from its several uses (located at the backward that
    reads it: the operation that made the tensor), the copy that
    functionalization appends for an argument written in place (at the
    write), or the optimizer's update (at the gradient it reads)."""
    located = {node: node.meta["stack_trace"] for node in graph.nodes
               if node.op == "call_function" and node.meta.get("stack_trace")}
    for node in graph.nodes:
        if node.op != "call_function" or node in located:
            continue
        seen, frontier, found = {node}, [node], None
        while frontier and found is None and len(seen) < limit:
            following = []
            for current in frontier:
                for other in [*current.users, *current.all_input_nodes]:
                    if other in seen:
                        continue
                    seen.add(other)
                    if other in located:
                        found = other
                        break
                    # Not through an argument or the results: everything
                    # that reads a parameter is "near" it.
                    if other.op == "call_function":
                        following.append(other)
                if found is not None:
                    break
            frontier = following
        if found is not None:
            node.meta["stack_trace"] = located[found]


# Where a refusal has no line of the model: an option, or an operation that
# PyTorch's backward, the optimizer update or ga-mlir itself added.
UNLOCATED = "the training step (no line of the model)"


# ga-mlir's refusals in PyTorch's words, keyed by their stable code: the
# compiler's, given to each of its diagnostics where it emits it
# (include/ga/IR/DiagnosticCodes.def; Diagnostic.code), then the frontend's
# own (ga_mlir._codes.FRONTEND_CODES; CompileError.code): what is wrong at
# the user's line and what to do. test/python/torch/torch-refusals.py checks
# that every refusal of the C++ sources (refusal_sources.py) carries a code
# with words here, or is one a PyTorch step cannot meet, and that every
# declared code has words here.
ADVICE = {
    "per-sample-indexed-read":
        "this line reads a per-sample tensor by index (x[idx], torch.gather, "
        "index_select, a mask indexed by batch positions) at positions that "
        "the compiled step cannot relate to the sample they belong to, so it "
        "cannot split the batch into micro-batches here: index the batch "
        "dimension with each sample's own position (or not at all), or pass "
        "the values that are read as an input of the step",
    "batch-dimension-moved":
        "this line reads the batch dimension of a tensor in a way that does "
        "not keep each sample in its place (a diagonal, a strided or shifted "
        "view of the batch dimension, an einsum or matmul that repeats it or "
        "pairs it with another dimension, a result without it that is not a "
        "reduction over it), so it cannot be split into micro-batches: keep "
        "the batch dimension a plain dimension of every operand and of the "
        "result",
    "samples-selected":
        "this line selects, writes or adds particular samples of the batch "
        "(x[0], x[:k], x[i] in a Python loop over the samples, narrow, split "
        "or chunk along the batch dimension, an in-place write to x[k], F.pad "
        "of the batch dimension, .item() of a per-sample value), but a "
        "micro-batch holds only its own samples: treat every sample alike "
        "with whole-batch operations (x[:, ...], no loop over the samples), "
        "or pick the samples before the step",
    "batches-joined":
        "torch.cat (or a reshape after it) here joins per-sample tensors, or a "
        "per-sample tensor and one that is not, along the batch dimension, "
        "so a micro-batch would see the rows of another: join them along "
        "another dimension (torch.stack(..., dim=1), torch.cat(..., dim=-1)) "
        "or keep them as separate tensors",
    "batch-dimension-reshaped":
        "this line reshapes the batch dimension so that samples are split "
        "apart or merged with another dimension (x.view(2, -1, ...), "
        "x.reshape(-1) or flatten over dimensions that do not start at the "
        "batch dimension, a view with a size computed from the batch; or a "
        "batch dimension that is not first, as in a sequence-first [T, B, "
        "...] layout or after a transpose, merged with the dimensions before "
        "it, as an embedding lookup of [T, B] indices does: the compiler's "
        "words in parentheses say which dimension the batch is): keep the "
        "batch dimension whole and outermost of what is merged (x.view(B, "
        "...), x.flatten(1), x.reshape(B * T, ...) of a [B, T, ...] tensor; "
        "batch_first=True, or transpose the batch dimension back to the "
        "front before the merge)",
    "batch-coupling":
        "each sample's computation here uses a value computed from the whole "
        "batch (a mean, variance, norm, max or softmax over the batch "
        "dimension, as BatchNorm in training mode, F.normalize(x, dim=0) or "
        "x - x.mean(0) compute; the line of that reduction is in the note "
        "below), which every micro-batch would compute from its own samples "
        "only: compute it per sample, or pass recompute_statistics=True to "
        "compile_train_step to compute it exactly in an extra pass over the "
        "micro-batches (allow_ghost_batch=True accepts per-micro-batch values, "
        "as PyTorch's own gradient accumulation computes them)",
    "softmax-over-batch":
        "this line applies softmax (or log_softmax) over the batch dimension, "
        "which divides each sample by a sum over all the others: micro-batches "
        "cannot reproduce it; apply it over another dimension",
    "samples-combined":
        "this line combines every sample of the batch with every other (a "
        "product or a statistic over the batch dimension, such as x @ x.T, "
        "torch.cdist(x, x) or a mean over dim 0 before the loss), which "
        "micro-batches cannot reproduce: compute it per sample, or outside "
        "the step",
    "unsplittable-reduction":
        "this line reduces over the batch dimension with an operation whose "
        "partial results over micro-batches (or ranks) cannot be combined "
        "exactly (a product, a cumulative or ordered reduction, an argmax "
        "that keeps the first maximum): reduce over the batch with sum, mean, "
        "max or min, or compute it per sample",
    "per-sample-result":
        "loss_fn returns this line's per-sample tensor (a metric with the "
        "batch dimension), but in a process group each rank holds only its "
        "shard of the batch: return a reduction over the batch (a sum, mean, "
        "max or min) instead, or compute the per-sample values outside the "
        "step",
    "batch-dimensions-misaligned":
        "this line combines tensors whose batch dimensions are in different "
        "positions (x + x.T, a permuted or transposed copy of a per-sample "
        "tensor with the original, a tensor whose batch dimension is not the "
        "one batch_dims names): bring the batch dimensions to the same "
        "position first (permute, transpose, movedim)",
    "per-sample-control-flow":
        "this line's operation became a branch or a loop (torch.cond, or an "
        "operation that torch-mlir lowers to one) holding per-sample work "
        "that the micro-batch split cannot follow: write it without "
        "data-dependent control flow (torch.where instead of a branch, "
        "whole-batch operations instead of a loop)",
    "op-not-analyzed":
        "torch-mlir lowered the PyTorch operation of this line to a form that "
        "ga-mlir's batch analysis has no rule for, so it cannot prove that "
        "micro-batches compute what the whole batch does: write it with other "
        "operations (elementwise operations, matmul, reductions, reshapes, "
        "indexing that keeps the batch dimension), or report it with the "
        "line",
    "dynamic-size":
        "a size on this line depends on the data (torch.nonzero, a boolean "
        "mask x[mask], torch.unique, a shape computed from values): the "
        "compiled step needs every size except the batch known when it is "
        "compiled; use fixed sizes (torch.where with a mask instead of "
        "selecting the elements)",
    "shape-mismatch":
        "the shapes of this line's operation disagree in the traced step "
        "(undefined behaviour when it runs): check the shapes of the tensors "
        "on this line (a view or expand whose sizes do not match its input)",
    "micro-batches-exceed-batch":
        "micro_batches is larger than the batch: every micro-batch needs at "
        "least one sample; pass micro_batches at most the batch size (or "
        "micro_batch_size=)",
    "batch-size-mismatch":
        "the example inputs have different sizes along their batch "
        "dimensions: give them the same batch size, or name each one's batch "
        "dimension with batch_dims=",
    "budget-not-met":
        "no number of micro-batches brings the step's peak memory under "
        "max_memory: raise max_memory (the smallest peak and its N are in the "
        "compiler's words), or make the model's activations smaller",
    "invalid-accumulator-type":
        "accumulator_type= names a type the gradients cannot be accumulated "
        "in: pass 'f16', 'bf16', 'f32' or 'f64'",
    "contradictory-options":
        "give only one of micro_batches=, micro_batch_size= and max_memory= "
        "(each of them sets the number of micro-batches)",
    "invalid-max-memory":
        "max_memory= must be a number of bytes or a string such as '256MiB' "
        "(a number followed by KiB, MiB, GiB, TiB, or kB, MB, GB, TB in "
        "powers of 1000)",
    "invalid-options":
        "an option of compile_train_step has a value that the compiler does "
        "not take (True or False for the switches such as "
        "recompute_statistics, allow_ghost_batch, fuse, blas, openmp; a "
        "positive int for vector_width and num_threads)",
    "not-lowered":
        "the PyTorch operation of this line became an operation that "
        "ga-mlir's lowering to CPU or GPU code does not handle: write it with "
        "other operations, or report it with the line",
    # The frontend's own refusals (ga_mlir._codes.FRONTEND_CODES).
    "compiler-refused":
        "ga-mlir cannot compile the PyTorch operation named in its words (a "
        "limitation or a bug of ga-mlir): please report it with the line",
    "tool-failed":
        "a tool that compiles the lowered step (clang, llc, ptxas, "
        "fatbinary) failed: its output follows; report it with the model",
    "toolchain-missing":
        "a tool or library that the step needs is not in the build: build "
        "ga-mlir (bash scripts/setup.sh), with the CUDA toolkit for "
        "target='cuda', or set GA_BUILD_DIR to a build that has it",
    "no-cuda-device":
        "the step was compiled for target='cuda' and this machine has no "
        "CUDA device: run it where torch.cuda.is_available(), or compile it "
        "with target='cpu'",
    "invalid-argument":
        "an argument of compile_train_step (or of ga-compile) has a value "
        "that it does not take: the message names the argument and the "
        "values it takes",
    "options-contradict":
        "these options of compile_train_step (or ga-compile) cannot be given "
        "together: drop one of them, as the message says",
    "file-unreadable":
        "a file that the step needs (an input, a saved step, its library) "
        "cannot be read: check its path and permissions",
    "process-group-mismatch":
        "the step and torch.distributed disagree on the process group: "
        "compile (or load) a data-parallel step inside an initialized "
        "process group (torchrun), and a single-process step outside one or "
        "with process_group=None",
    "ranks-disagree":
        "every rank of a process group must compile the same step (same "
        "model, optimizer, options and input shapes): the message names the "
        "first difference",
    "too-few-samples":
        "every micro-batch (and every rank) needs at least one sample: pass "
        "fewer micro-batches, or a larger batch",
    "inputs-batch-disagree":
        "the step's inputs have different batch sizes: give every input the "
        "same number of samples along its batch dimension",
    "tensor-placement":
        "the step's tensors must be on the device of its target (CPU tensors "
        "for target='cpu', CUDA tensors for target='cuda') and float32 "
        "parameters: move them (model.to(...)) or compile for their device",
    "storage-layout":
        "give every parameter, buffer and optimizer state its own contiguous "
        "storage (.contiguous(), .clone()), or pass in_place=False",
    "step-signature-mismatch":
        "the model, optimizer, state or inputs are not those the step was "
        "compiled (or saved) for: compile the step again for them",
    "saved-step-format":
        "the saved step was written by another version of ga_mlir: compile "
        "and save it again with this one",
    "save-not-supported":
        "this kind of step cannot be saved yet: compile it again where it is "
        "needed instead of saving it",
    "unsupported-optimizer":
        "the compiled step cannot run this optimizer or this setting of it: "
        "use a torch.optim optimizer with plain Python-number settings and "
        "tensor state, without step hooks",
    "optimizer-not-traceable":
        "the optimizer's step() fails, or does something else, when traced "
        "with the model's parameters: the message has PyTorch's error; run "
        "optimizer.step() eagerly once to check it",
    "optimizer-state-mismatch":
        "the optimizer's state is not the one its step() keeps (a state "
        "loaded from another optimizer or version): start from a fresh "
        "optimizer or load a matching state",
    "trace-failed":
        "PyTorch cannot trace the step (torch.export's rules apply to the "
        "forward): the message has PyTorch's error at the user's line",
    "import-failed":
        "torch-mlir cannot lower the traced step: the message names the "
        "PyTorch operation; write it with other operations, or report it",
    "random-draw-unsupported":
        "the compiled step draws random numbers per sample as Dropout, "
        "torch.bernoulli, torch.rand, uniform_ and exponential_ do, with "
        "the batch dimension first: draw them in that form, or pass the "
        "numbers as an input of the step",
    "data-dependent-size":
        "this line uses a size computed from the data (a boolean mask's "
        "selection, F.one_hot without num_classes) where the compiled step "
        "needs it known: use fixed sizes (torch.where with the mask, "
        "num_classes=)",
    "batch-norm-training":
        "BatchNorm in training mode normalizes each sample with statistics "
        "of the whole batch, which micro-batches cannot reproduce: pass "
        "recompute_statistics=True to compile_train_step (exact: an extra "
        "pass over the micro-batches), or use model.eval() for the "
        "normalization layers, or GroupNorm/LayerNorm",
    "unsupported-layer":
        "this layer is used with an option that the compiled step does not "
        "support: the message names it and what to give instead",
    "unsupported-operation":
        "this line's PyTorch operation (in this form) is not compiled: write "
        "it with other operations, or report it with the line",
    "moe-routing":
        "the mixture-of-experts layer's routing is not in a form the "
        "frontend can prove per-token (a sort, gather and grouped product "
        "of the token-expert pairs, or a full loop over the experts): the "
        "message names the value that breaks it",
    "in-place-write":
        "the forward writes in place into a buffer or an input that the "
        "compiled step would not carry: compute a new tensor and return it, "
        "or make it a parameter",
    "autograd-function-form":
        "define the autograd.Function with a separate setup_context "
        "(forward(input, ...) without ctx, setup_context(ctx, inputs, "
        "output)), as torch.func requires",
    "loss-fn-result":
        "loss_fn must return the loss of the whole batch (a 0-d tensor), or "
        "(loss, metrics) with metrics tensors (a tensor, or a dict, tuple or "
        "list of them)",
    "internal-error":
        "ga_mlir reached a state it does not expect (a bug): please report "
        "it with the model",
    "checkpoint-option":
        "remove this option from the torch.utils.checkpoint call: the "
        "compiled step reads checkpoint(fn, *args) as fn(*args) and chooses "
        "what it keeps and recomputes itself (compile_train_step's "
        "max_memory= and recompute=)",
}

# Pass options named in the compiler's notes, as compile_train_step takes
# them.
_OPTIONS = [("recompute-statistics", "recompute_statistics=True"),
            ("allow-ghost-batch", "allow_ghost_batch=True")]


def explain(diagnostic):
    """A diagnostic of ga-mlir (ga_mlir.Diagnostic: the text ga-opt prints,
    with its code and location as data) with the PyTorch-level advice of its
    code in front of the compiler's own words; one without a code is said to
    be ga-mlir's limitation. Notes and anything that is not an error or a
    warning are left as they are."""
    severity = getattr(diagnostic, "severity", None)
    if severity not in ("error", "warning"):
        return diagnostic.rstrip("\n")
    where = f"{diagnostic.file}:{diagnostic.line}" if diagnostic.file \
        else UNLOCATED
    first = diagnostic.message.strip().partition("\n")[0]
    rest = diagnostic.strip().partition("\n")[2]
    for option, keyword in _OPTIONS:
        rest = rest.replace(option, keyword)
    words = ADVICE.get(diagnostic.code) or (
        "ga-mlir cannot compile the PyTorch operation of this line (a "
        "limitation or a bug of ga-mlir: please report it with the line)")
    return (f"{where}: {severity}: {words} (ga-mlir: {first})"
            + (f"\n{rest}" if rest else ""))
