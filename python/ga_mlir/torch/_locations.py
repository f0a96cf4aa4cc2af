"""Where a problem is, in the user's terms: the user's (or a library's)
file and line from a traced node's Python stack trace, without the frames
of torch and ga_mlir."""

import os
import re
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


def _user_frames(stack_trace, inside_step=False):
    """The frames of a node's stack trace outside torch and ga_mlir, in the
    traceback's format (outermost first). With `inside_step`, only those
    inside the step's call of the user's loss function (none if the stack
    does not pass through it: an operation of the backward or of the
    optimizer)."""
    frames = re.split(r'(?m)^(?=  File ")', stack_trace or "")
    for i in reversed(range(len(frames))):
        m = re.match(r'\s*File "([^"]+)", line \d+, in (\w+)', frames[i])
        if m and (os.path.abspath(m.group(1)), m.group(2)) == _ENTRY:
            frames = frames[i + 1:]
            break
    else:
        if inside_step:
            return ""
    kept = []
    for frame in frames:
        m = re.match(r'\s*File "([^"]+)", line \d+', frame)
        if not m:
            continue
        path = os.path.abspath(m.group(1))
        if m.group(1).startswith("<") or path.startswith(_PACKAGE_DIRS) \
                or os.sep + "torch_mlir" + os.sep in path:
            continue
        kept.append(frame if frame.endswith("\n") else frame + "\n")
    return "".join(kept)


def _innermost_user_line(stack_trace):
    frames = re.findall(r'File "([^"]+)", line (\d+)', _user_frames(
        stack_trace))
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else None


def current_user_line():
    """file:line of the innermost frame of the running Python stack outside
    torch and ga_mlir (the model's line that is being traced), or
    "<unknown>"."""
    return _innermost_user_line("".join(traceback.format_stack())) or \
        "<unknown>"


def _first_location(operation, prefix):
    """file:line of the first op named `prefix`... under `operation` that
    has a file location, or "<unknown>"."""
    stack = [operation]
    while stack:
        op = stack.pop(0)
        if op.name.startswith(prefix):
            found = re.search(r'"([^"]+)":(\d+)', str(op.location))
            if found:
                return f"{found.group(1)}:{found.group(2)}"
        stack[:0] = [inner.operation for region in op.regions
                     for block in region.blocks for inner in block.operations]
    return "<unknown>"


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
            node.meta["stack_trace"] = _user_frames(node.meta["stack_trace"],
                                                    inside_step=True)
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


# ga-mlir's refusals, in PyTorch's words: (pattern of the analysis's
# message, what is wrong at the user's line and what to do).
_EXPLANATIONS = [
    (r"no operand of '[\w.]+' is per-sample, and its payload does not read|"
     r"reads a per-sample value captured from above",
     "this line reads a per-sample tensor by index (x[idx], torch.gather, "
     "index_select, a mask indexed by batch positions) at positions that "
     "the compiled step cannot relate to the sample they belong to, so it "
     "cannot split the batch into micro-batches here: index the batch "
     "dimension with each sample's own position (or not at all), or pass "
     "the values that are read as an input of the step"),
    (r"concatenating along the batch dimension mixes batches",
     "torch.cat/torch.stack here joins per-sample tensors along their batch "
     "dimension, so a micro-batch would see the samples of another: join "
     "them along another dimension"),
    (r"combines every sample with every other",
     "this line combines every sample of the batch with every other (a "
     "product or a statistic over the batch dimension, such as x.T @ x or "
     "a mean over dim 0 before the loss), which micro-batches cannot "
     "reproduce: compute it per sample, or outside the step"),
]


def explain(diagnostic):
    """A diagnostic of ga-mlir ("file:line:col: error: message") with the
    PyTorch-level explanation of its message in front of the compiler's
    own words; other diagnostics as they are."""
    m = re.match(r"(?s)(.*?):(\d+):\d+: error: (.*)", diagnostic.strip())
    if not m:
        return diagnostic.rstrip("\n")
    where, line, message = m.groups()
    first, _, rest = message.strip().partition("\n")
    for pattern, words in _EXPLANATIONS:
        if re.search(pattern, first):
            return (f"{where}:{line}: error: {words} (ga-mlir: {first})"
                    + (f"\n{rest}" if rest else ""))
    return diagnostic.rstrip("\n")


def describe_location(location):
    """An MLIR location of the imported step ("loc(callsite(...))") as
    "file:line" of its innermost frame, with the frames that called it;
    "the step (no Python line: an operation of the optimizer update)" when
    it has none."""
    frames = re.findall(r'"([^"]+)":(\d+):\d+', str(location))
    if not frames:
        return "<the step's optimizer update or a generated operation>"
    inner = f"{frames[0][0]}:{frames[0][1]}"
    callers = ", ".join(f"{f}:{n}" for f, n in frames[1:])
    return inner + (f" (called from {callers})" if callers else "")
