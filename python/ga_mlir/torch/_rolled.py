"""The import of a traced step with time loops (_recurrence) as scf.for.

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
everything is inlined: one function, with one copy of each body.
"""

import json

import torch
from torch.fx import Graph, GraphModule

from . import _recurrence
from ._common import CompileError
from ._locations import _innermost_user_line

_SCANS = (_recurrence.SCAN_FORWARD, _recurrence.SCAN_BACKWARD)


def has_loops(gm):
    return any(n.op == "call_function" and n.target in _SCANS
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
        if node.op == "call_function" and node.target in _SCANS:
            if current:
                parts.append(("segment", current))
                current = []
            parts.append(("loop", node))
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

class _Writer:
    """The text of @train_step, value by value."""

    def __init__(self, types):
        self.lines, self.count, self.types = [], 0, types
        # The location of the ops emitted: a loop's at the user's line.
        self.loc = "loc(unknown)"

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def emit(self, line):
        self.lines.append("  " + line +
                          ("" if line.endswith("{") else " " + self.loc))

    def call(self, name, args):
        ins, outs = self.types[name]
        results = [self.fresh() for _ in outs]
        head = (", ".join(results) + " = ") if results else ""
        self.emit(f"{head}func.call @{name}({', '.join(args)}) : "
                  f"({', '.join(ins)}) -> ({', '.join(outs)})")
        return results


def _shape(value_type):
    """[dims] and element type of `tensor<AxBxf32>`."""
    body = value_type[len("tensor<"):-1].split("x")
    return [int(d) for d in body[:-1]], body[-1]


def _slice(w, stack, stack_type, t, insert=None):
    """extract_slice of step `t` of `stack` ([B, T, ...]), or insert_slice
    of `insert` there."""
    dims, elem = _shape(stack_type)
    step_type = "tensor<" + "x".join(str(d) for d in [dims[0]] + dims[2:]) \
        + f"x{elem}>"
    offsets = ", ".join(["0", t] + ["0"] * (len(dims) - 2))
    sizes = ", ".join(str(d) for d in [dims[0], 1] + dims[2:])
    strides = ", ".join(["1"] * len(dims))
    r = w.fresh()
    if insert is None:
        w.emit(f"{r} = tensor.extract_slice {stack}[{offsets}] [{sizes}] "
               f"[{strides}] : {stack_type} to {step_type}")
    else:
        w.emit(f"{r} = tensor.insert_slice {insert} into {stack}[{offsets}] "
               f"[{sizes}] [{strides}] : {step_type} into {stack_type}")
    return r


_ELEMENTS = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
             torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
             torch.bool: "i1"}


def _type(node):
    val = node.meta["val"]
    if val.dtype not in _ELEMENTS:
        raise CompileError(f"a value of type {val.dtype} around a time loop")
    return "tensor<" + "".join(f"{d}x" for d in val.shape) + \
        _ELEMENTS[val.dtype] + ">"


def _stack_type(step_type, t):
    """tensor<BxTx...> of a step's tensor<Bx...>."""
    dims, elem = _shape(step_type)
    return "tensor<" + "x".join(str(d) for d in [dims[0], t] + dims[1:]) + \
        f"x{elem}>"


def _operands(w, vals, node, body):
    """A loop node's operands as (sliced, carried, fixed): the stacked
    values read at each step, the initial carried states, the values every
    step reads (each a (value, type) pair); and the indices of the body's
    results that are carried (the others are stacked)."""
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
    zeros = []
    for i in carry_of:
        z, ty = w.fresh(), w.types[body][1][i]
        w.emit(f"{z} = arith.constant dense<0.000000e+00> : {ty}")
        zeros.append((z, ty))
    sliced = [vals[dhs]] + ([vals[dcs]] if lstm else []) + \
        [vals[xw], vals[gh], vals[h_prev]] + ([vals[c_prev]] if lstm else [])
    return sliced, zeros, [vals[w_hh]], carry_of


def _constant(w, value):
    name = w.fresh()
    w.emit(f"{name} = arith.constant {value} : index")
    return name


def _loop(w, vals, node, body):
    """The scf.for of a loop node over its time steps (backwards for the
    backward of a forward loop, and the forward of a reverse one); binds
    the node's getitem users in `vals`, in _recurrence's order of
    results."""
    forward = node.target == _recurrence.SCAN_FORWARD
    where = _innermost_user_line(node.meta.get("stack_trace"))
    if where:
        file, line = where.rsplit(":", 1)
        w.loc = f"loc({json.dumps(file)}:{line}:0)"
    t = (node.args[1] if forward else node.args[3]).meta["val"].shape[1]
    lower, one, last, count = (_constant(w, v) for v in (0, 1, t - 1, t))
    sliced, carried, fixed, carry_of = _operands(w, vals, node, body)
    outs = w.types[body][1]
    stacked = [i for i in range(len(outs)) if forward or i not in carry_of]
    stack_types = [_stack_type(outs[i], t) for i in stacked]
    iters = list(carried)
    for st in stack_types:
        e = w.fresh()
        w.emit(f"{e} = tensor.empty() : {st}")
        iters.append((e, st))
    args = [w.fresh() for _ in iters]
    results, index = w.fresh(), w.fresh()
    types = ", ".join(ty for _, ty in iters)
    w.emit(f"{results}:{len(iters)} = scf.for {index} = {lower} to {count} "
           f"step {one} iter_args(" + ", ".join(
               f"{a} = {v}" for a, (v, _) in zip(args, iters)) +
           f") -> ({types}) {{")
    step = index
    if forward == node.args[-1]:  # a reverse forward, a forward's backward
        step = w.fresh()
        w.emit(f"{step} = arith.subi {last}, {index} : index")
    got = w.call(body, [_slice(w, v, ty, step) for v, ty in sliced] +
                 args[:len(carried)] + [v for v, _ in fixed])
    new_stacks = [_slice(w, a, st, step, insert=got[i]) for a, st, i in
                  zip(args[len(carried):], stack_types, stacked)]
    w.emit("scf.yield " + ", ".join([got[i] for i in carry_of] + new_stacks)
           + f" : {types}")
    w.emit("}")
    res = [(f"{results}#{k}", ty) for k, (_, ty) in enumerate(iters)]
    # Forward: [hs, gh[, cs]], all stacked; backward: [dxw, dgh] stacked,
    # then the last carried [dh0[, dc0]].
    ordered = res[len(carried):] if forward else \
        res[len(carried):] + res[:len(carried)]
    for user in node.users:
        vals[user] = ordered[user.args[1]]
    w.loc = "loc(unknown)"


def import_rolled(gm, table, import_graphs):
    """The step `gm` (with time loops) as one linalg-on-tensors module of
    torch-mlir's Python API, @train_step with scf.for loops;
    `import_graphs([(graph, name), ...])` imports and lowers flat graphs
    into one module."""
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
        graphs.append((_loop_body(item, table).graph, f"ga_loop_body_{k}"))
        plan.append((k, item, None, None))
    module = import_graphs(graphs)
    types = {}
    for op in module.body.operations:
        ftype = ir.TypeAttr(op.attributes["function_type"]).value
        ftype = ir.FunctionType(ftype)
        types[ir.StringAttr(op.attributes["sym_name"]).value] = (
            [str(t) for t in ftype.inputs], [str(t) for t in ftype.results])
    w = _Writer(types)
    vals = {}
    for i, p in enumerate(placeholders):
        vals[p] = (f"%arg{i}", _type(p))
    for k, node, ins, outs in plan:
        if node is None:
            got = w.call(f"ga_segment_{k}", [vals[n][0] for n in ins])
            for n, r, ty in zip(outs, got, types[f"ga_segment_{k}"][1]):
                vals[n] = (r, ty)
        else:
            _loop(w, vals, node, f"ga_loop_body_{k}")
    results = [vals[n] for n in output.args[0]]
    head = ", ".join(f"{v}: {ty} loc(unknown)"
                     for v, ty in (vals[p] for p in placeholders))
    text = [f"func.func @train_step({head}) -> "
            f"({', '.join(ty for _, ty in results)}) {{"]
    text += w.lines
    text.append("  return " + ", ".join(v for v, _ in results) + " : " +
                ", ".join(ty for _, ty in results))
    text.append("} loc(unknown)")
    declarations = [f"func.func private @{name}({', '.join(i)}) -> "
                    f"({', '.join(o)})" for name, (i, o) in types.items()]
    with module.context:
        parsed = ir.Module.parse("\n".join(declarations + text))
        main = parsed.body.operations[len(declarations)]
        main.detach_from_parent()
        module.body.append(main)
        for op in module.body.operations:
            if ir.StringAttr(op.attributes["sym_name"]).value != "train_step":
                op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        PassManager.parse(
            "builtin.module(inline, symbol-dce, "
            "func.func(loop-invariant-code-motion))").run(
            module.operation)
    return module

