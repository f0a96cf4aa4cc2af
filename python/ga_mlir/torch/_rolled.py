"""The import of a traced step with time loops (_recurrence) as scf.for,
and with grouped products (_moe) as ga.grouped_matmul.

torch-mlir imports flat graphs. A step whose graph holds the custom ops of
_recurrence (a time loop each) is imported in pieces, all in one module:

* the plain parts of the graph between two loops (segments), each a
  function of the values it reads from earlier parts;
* for each loop, its body (one time step: _recurrence.forward_step or
  backward_step, traced by make_fx with the step's decompositions);

all lowered to linalg-on-tensors by torch-mlir's own pipelines. Then
@train_step calls the segments in order and runs each loop as an scf.for
over the time steps whose iteration arguments are the carried states and
the stacked results (tensor.extract_slice / insert_slice at the step), and
everything is inlined: one function, with one copy of each body. A grouped
product of _moe (which torch-mlir has no op for) is a part of its own too:
one ga.grouped_matmul, built between the segments in its generic form.
"""

import torch
from torch.fx import Graph, GraphModule

from . import _moe, _recurrence
from ._common import CompileError
from ._locations import _innermost_user_line
from ._mlir_locations import location_frames

_SCANS = (_recurrence.SCAN_FORWARD, _recurrence.SCAN_BACKWARD)


_PIECES = _SCANS + _moe.GROUPED


def has_loops(gm):
    """Whether `gm` holds a time loop or a grouped product (imported in
    parts here)."""
    return any(n.op == "call_function" and n.target in _PIECES
               for n in gm.graph.nodes)


# --------------------------------------------------------------------------
# Splitting the graph
# --------------------------------------------------------------------------

def _parts(graph):
    """The graph's nodes in order as ("segment", [nodes]) and ("loop",
    node) parts (a loop's getitem nodes belong to it)."""
    parts, current = [], []
    for node in graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "call_function" and node.target in _PIECES:
            if current:
                parts.append(("segment", current))
                current = []
            parts.append(("loop" if node.target in _SCANS else "grouped",
                          node))
            continue
        if node.op == "call_function" and node.args and \
                isinstance(node.args[0], torch.fx.Node) and \
                node.args[0].target in _SCANS:
            continue  # getitem of a loop's results
        current.append(node)
    if current:
        parts.append(("segment", current))
    return parts


def _segment_module(root, nodes):
    """A GraphModule of `nodes` (a segment of `root`'s graph; its constants
    taken from `root`): placeholders for the values it reads from outside,
    outputs for those read after it. Returns (module, inputs, outputs) with
    inputs and outputs as original nodes."""
    inside = set(nodes)
    inputs, env, graph = [], {}, Graph()

    def value(arg):
        if arg not in env:
            inputs.append(arg)
            placeholder = graph.placeholder(f"in{len(inputs)}")
            placeholder.meta = dict(arg.meta)
            env[arg] = placeholder
        return env[arg]

    for node in nodes:
        for arg in node.all_input_nodes:
            if arg not in inside:
                value(arg)
        env[node] = graph.node_copy(node, lambda a: env[a])
    outputs = [n for n in nodes if any(u not in inside for u in n.users)]
    graph.output(tuple(env[n] for n in outputs))
    return GraphModule(root, graph), inputs, outputs


# --------------------------------------------------------------------------
# Tracing a loop's body
# --------------------------------------------------------------------------

def _example(node, drop_time=False):
    """A zero tensor like the value of `node` (without its dimension 1)."""
    val = node.meta["val"]
    shape = list(val.shape)
    if drop_time:
        del shape[1]
    return torch.zeros(shape, dtype=val.dtype)


def _trace_body(fn, examples, table, stack_trace):
    """make_fx of `fn` on `examples`, each node at the loop's line."""
    from torch.fx.experimental.proxy_tensor import make_fx
    gm = make_fx(fn, decomposition_table=table)(*examples)
    for node in gm.graph.nodes:
        if stack_trace:
            node.meta["stack_trace"] = stack_trace
    return gm


def _loop_body(node, table):
    """The GraphModule of a loop node's body (one time step)."""
    kind, lstm = node.args[0], node.args[0] == "lstm"
    trace = node.meta.get("stack_trace")
    if node.target == _recurrence.SCAN_FORWARD:
        _, xw, h0, c0, w_hh, b_hh, _ = node.args

        def body(xw_t, h, *rest):
            it = iter(rest)
            c = next(it) if lstm else None
            w = next(it)
            b = next(it) if b_hh is not None else None
            h, c, gh = _recurrence.forward_step(kind, xw_t, h, c, w, b)
            return (h, gh) + ((c,) if lstm else ())
        examples = [_example(xw, True), _example(h0)]
        examples += [_example(c0)] if lstm else []
        examples += [_example(w_hh)]
        examples += [_example(b_hh)] if b_hh is not None else []
        return _trace_body(body, examples, table, trace)
    _, dhs, dcs, xw, gh, h_prev, c_prev, w_hh, _ = node.args

    def body(*args):
        # The step's slices, the carried gradients, the weight.
        it = iter(args)
        dhs_t = next(it)
        dcs_t = next(it) if lstm else None
        xw_t, gh_t, hp = next(it), next(it), next(it)
        cp = next(it) if lstm else None
        dh = next(it)
        dc = next(it) if lstm else None
        out = _recurrence.backward_step(
            kind, dhs_t + dh, dcs_t + dc if lstm else None, xw_t, gh_t, hp,
            cp, next(it))
        return out[:3] + ((out[3],) if lstm else ())

    sliced = [dhs] + ([dcs] if lstm else []) + [xw, gh, h_prev] + \
        ([c_prev] if lstm else [])
    carried = [h_prev] + ([c_prev] if lstm else [])
    examples = [_example(n, True) for n in sliced + carried] + \
        [_example(w_hh)]
    return _trace_body(body, examples, table, trace)


# --------------------------------------------------------------------------
# @train_step
# --------------------------------------------------------------------------

class _Builder:
    """@train_step's ops, built with torch-mlir's MLIR Python API under an
    insertion point (in its context): types are `ir.Type` objects, ops are
    `ir.Operation.create` of their generic form."""

    def __init__(self, ir, signatures):
        self.ir = ir
        # name -> ([input types], [result types]) of the imported functions.
        self.signatures = signatures
        # The location of the ops built: a loop's at the user's line.
        self.loc = ir.Location.unknown()

    def op(self, name, operands=(), results=(), attributes=None, regions=0):
        return self.ir.Operation.create(
            name, results=list(results), operands=list(operands),
            attributes=attributes or {}, regions=regions, loc=self.loc)

    def call(self, name, args):
        outs = self.signatures[name][1]
        callee = self.ir.FlatSymbolRefAttr.get(name)
        return list(self.op("func.call", args, outs,
                            {"callee": callee}).results)

    def index(self, value):
        ty = self.ir.IndexType.get()
        return self.op("arith.constant", (), [ty], {
            "value": self.ir.IntegerAttr.get(ty, value)}).result

    def zeros(self, ty):
        """A zero tensor of the float tensor type `ty`."""
        ir = self.ir
        elem = ir.RankedTensorType(ty).element_type
        return self.op("arith.constant", (), [ty], {
            "value": ir.DenseElementsAttr.get_splat(
                ty, ir.FloatAttr.get(elem, 0.0))}).result

    def slice(self, stack, t, insert=None):
        """extract_slice of step `t` (an index value) of `stack` ([B, T,
        ...]), or insert_slice of `insert` there."""
        ir = self.ir
        stack_type = ir.RankedTensorType(stack.type)
        dims = list(stack_type.shape)
        attributes = {
            "static_offsets": ir.DenseI64ArrayAttr.get(
                [0, ir.ShapedType.get_dynamic_size()] + [0] * (len(dims) - 2)),
            "static_sizes": ir.DenseI64ArrayAttr.get(
                [dims[0], 1] + dims[2:]),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(dims))}
        if insert is None:
            step_type = ir.RankedTensorType.get(
                [dims[0]] + dims[2:], stack_type.element_type)
            attributes["operandSegmentSizes"] = \
                ir.DenseI32ArrayAttr.get([1, 1, 0, 0])
            return self.op("tensor.extract_slice", [stack, t], [step_type],
                           attributes).result
        attributes["operandSegmentSizes"] = \
            ir.DenseI32ArrayAttr.get([1, 1, 1, 0, 0])
        return self.op("tensor.insert_slice", [insert, stack, t],
                       [stack_type], attributes).result


def _element_types(ir):
    return {torch.float32: ir.F32Type.get, torch.float64: ir.F64Type.get,
            torch.float16: ir.F16Type.get, torch.bfloat16: ir.BF16Type.get,
            torch.int64: lambda: ir.IntegerType.get_signless(64),
            torch.int32: lambda: ir.IntegerType.get_signless(32),
            torch.bool: lambda: ir.IntegerType.get_signless(1)}


def _type(ir, node):
    """The tensor type of a graph input (in the current context)."""
    val = node.meta["val"]
    element = _element_types(ir).get(val.dtype)
    if element is None:
        raise CompileError(f"a value of type {val.dtype} around a time loop",
                           code="internal-error")
    return ir.RankedTensorType.get(list(val.shape), element())


def _stack_type(ir, step_type, t):
    """tensor<BxTx...> of a step's tensor<Bx...>."""
    step = ir.RankedTensorType(step_type)
    dims = list(step.shape)
    return ir.RankedTensorType.get([dims[0], t] + dims[1:],
                                   step.element_type)


def _operands(b, vals, node, body):
    """A loop node's operands as (sliced, carried, fixed): the stacked
    values read at each step, the initial carried states, the values every
    step reads; and the indices of the body's results that are carried (the
    others are stacked)."""
    lstm = node.args[0] == "lstm"
    if node.target == _recurrence.SCAN_FORWARD:
        # Body: (xw_t, h[, c], w_hh[, b_hh]) -> (h, gh[, c]).
        _, xw, h0, c0, w_hh, b_hh, _ = node.args
        fixed = [vals[w_hh]] + ([vals[b_hh]] if b_hh is not None else [])
        return ([vals[xw]], [vals[h0]] + ([vals[c0]] if lstm else []),
                fixed, [0] + ([2] if lstm else []))
    # Body: (dhs_t[, dcs_t], xw_t, gh_t, h_prev_t[, c_prev_t], dh[, dc],
    # w_hh) -> (dxw, dgh, dh_prev[, dc_prev]); the carried gradients start
    # at zero.
    _, dhs, dcs, xw, gh, h_prev, c_prev, w_hh, _ = node.args
    carry_of = [2] + ([3] if lstm else [])
    zeros = [b.zeros(b.signatures[body][1][i]) for i in carry_of]
    sliced = [vals[dhs]] + ([vals[dcs]] if lstm else []) + \
        [vals[xw], vals[gh], vals[h_prev]] + ([vals[c_prev]] if lstm else [])
    return sliced, zeros, [vals[w_hh]], carry_of


def _loop(b, vals, node, body):
    """The scf.for of a loop node over its time steps (backwards for the
    backward of a forward loop, and the forward of a reverse one); binds
    the node's getitem users in `vals`, in _recurrence's order of
    results."""
    ir = b.ir
    forward = node.target == _recurrence.SCAN_FORWARD
    where = _innermost_user_line(node.meta.get("stack_trace"))
    if where:
        file, line = where.rsplit(":", 1)
        b.loc = ir.Location.file(file, int(line), 0)
    t = (node.args[1] if forward else node.args[3]).meta["val"].shape[1]
    lower, one, last, count = (b.index(v) for v in (0, 1, t - 1, t))
    sliced, carried, fixed, carry_of = _operands(b, vals, node, body)
    outs = b.signatures[body][1]
    stacked = [i for i in range(len(outs)) if forward or i not in carry_of]
    iters = list(carried) + [
        b.op("tensor.empty", (), [_stack_type(ir, outs[i], t)]).result
        for i in stacked]
    types = [v.type for v in iters]
    loop = b.op("scf.for", [lower, count, one] + iters, types, regions=1)
    block = ir.Block.create_at_start(loop.regions[0],
                                     [ir.IndexType.get()] + types)
    step, args = block.arguments[0], list(block.arguments)[1:]
    with ir.InsertionPoint(block):
        if forward == node.args[-1]:  # a reverse forward, a forward's backward
            step = b.op("arith.subi", [last, step],
                        [ir.IndexType.get()]).result
        got = b.call(body, [b.slice(v, step) for v in sliced] +
                     args[:len(carried)] + fixed)
        new_stacks = [b.slice(a, step, insert=got[i]) for a, i in
                      zip(args[len(carried):], stacked)]
        b.op("scf.yield", [got[i] for i in carry_of] + new_stacks)
    res = list(loop.results)
    # Forward: [hs, gh[, cs]], all stacked; backward: [dxw, dgh] stacked,
    # then the last carried [dh0[, dc0]].
    ordered = res[len(carried):] if forward else \
        res[len(carried):] + res[:len(carried)]
    for user in node.users:
        vals[user] = ordered[user.args[1]]
    b.loc = ir.Location.unknown()


def _grouped(b, vals, node):
    """The ga.grouped_matmul of a grouped product node of _moe (its weights'
    gradient with transpose_lhs), into a zero init, at the user's line."""
    ir = b.ir
    where = _innermost_user_line(node.meta.get("stack_trace"))
    if where:
        file, line = where.rsplit(":", 1)
        b.loc = ir.Location.file(file, int(line), 0)
    result = _type(ir, node)
    lhs, rhs, ends = node.args[:3]
    attributes = {}
    if node.target in _moe.WEIGHT_GRADS:
        attributes["transpose_lhs"] = ir.UnitAttr.get()
    if node.target in _moe.BY_ROWS:
        attributes["group_ids"] = ir.UnitAttr.get()
    vals[node] = b.op("ga.grouped_matmul",
                      [vals[lhs], vals[rhs], vals[ends], b.zeros(result)],
                      [result], attributes).result
    b.loc = ir.Location.unknown()


def import_rolled(gm, table, import_graphs):
    """The step `gm` (with time loops or grouped products) as one
    linalg-on-tensors module of torch-mlir's Python API, @train_step with
    scf.for loops and ga.grouped_matmul; `import_graphs([(graph, name),
    ...])` imports and lowers flat graphs into one module."""
    from torch_mlir import ir
    from torch_mlir.passmanager import PassManager

    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    output = next(n for n in graph.nodes if n.op == "output")
    plan, graphs = [], []
    for k, (what, item) in enumerate(_parts(graph)):
        if what == "segment":
            mod, ins, outs = _segment_module(gm, item)
            graphs.append((mod.graph, f"ga_segment_{k}"))
            plan.append((k, None, ins, outs))
            continue
        if what == "grouped":
            plan.append((k, item, None, None))
            continue
        graphs.append((_loop_body(item, table).graph, f"ga_loop_body_{k}"))
        plan.append((k, item, None, None))
    module = import_graphs(graphs)
    with module.context, ir.Location.unknown():
        signatures = {}
        for op in module.body.operations:
            ftype = ir.FunctionType(
                ir.TypeAttr(op.attributes["function_type"]).value)
            signatures[ir.StringAttr(op.attributes["sym_name"]).value] = (
                list(ftype.inputs), list(ftype.results))
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        b = _Builder(ir, signatures)
        inputs = [_type(ir, p) for p in placeholders]
        # The step at the first part's line of the model (each part is
        # at its first located node, _import._located_importer): a
        # refusal at the function (a budget nothing fits) names it.
        b.loc = next((op.location for op in module.body.operations
                      if location_frames(op.location)), b.loc)
        with ir.InsertionPoint(module.body):
            main = b.op("func.func", attributes={
                "sym_name": ir.StringAttr.get("train_step"),
                "function_type": ir.TypeAttr.get(
                    ir.FunctionType.get(inputs, []))}, regions=1)
        b.loc = ir.Location.unknown()
        entry = ir.Block.create_at_start(main.regions[0], inputs)
        vals = dict(zip(placeholders, entry.arguments))
        with ir.InsertionPoint(entry):
            for k, node, ins, outs in plan:
                if node is None:
                    got = b.call(f"ga_segment_{k}", [vals[n] for n in ins])
                    vals.update(zip(outs, got))
                elif node.target in _moe.GROUPED:
                    _grouped(b, vals, node)
                else:
                    _loop(b, vals, node, f"ga_loop_body_{k}")
            results = [vals[n] for n in output.args[0]]
            b.op("func.return", results)
        main.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, [r.type for r in results]))
        PassManager.parse(
            "builtin.module(inline, symbol-dce, "
            "func.func(loop-invariant-code-motion))").run(
            module.operation)
    return module
