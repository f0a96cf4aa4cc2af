"""Rewrites of the traced graph before torch-mlir imports it.

Indexing with iotas. `x[arange(B).view(B, 1, 1, 1), arange(S).view(1, 1, 1,
S)]` (transformers' padding_mask_function, under its traceable mask path)
selects every element of x in order: it is x laid out along the result's
dimensions, not a gather. As a gather it reads the per-sample x at indices
that --ga-accumulate cannot relate to its loops (a tensor.extract in a
linalg payload), and the step is refused. An aten.index.Tensor whose
indices are all constants of the trace (computed from shapes alone: no
argument of the step among their inputs) and each an iota along its own
dimension of the result, covering the indexed dimension of x in order,
becomes permute + view + expand of x: the same values, with the batch
dimension visible to the analysis.

Windows of a flattened base. An in-place op on a view of an intermediate
(torchvision's EfficientNet: `nn.Dropout(inplace=True)` on
`torch.flatten(pool(x), 1)`) is written back by functionalization, and its
backward read, through aten.as_strided / as_strided_scatter of the view's
base, which torch-mlir lowers neither of. When the base is contiguous from
the start of its storage and the window is dense (the strides of a
contiguous tensor of the window's size), as_strided reads the elements
[offset, offset + numel) of the flattened base: a slice and a view, and
as_strided_scatter writes them: a slice_scatter of the flattened base. Other
windows are left as they are (and refused by torch-mlir at their line).
This is a rewrite of the traced graph rather than a decomposition: a
decomposition also runs inside functionalization's own view replay, where
its result is not traced and would become a constant.
"""

import torch

aten = torch.ops.aten


def _constant_nodes(graph):
    """The nodes whose values do not depend on the step's arguments
    (placeholders) nor on anything random."""
    constant = set()
    for node in graph.nodes:  # topological order
        if node.op == "placeholder":
            continue
        if node.op == "get_attr" or all(
                a in constant for a in node.all_input_nodes):
            name = getattr(node.target, "__name__", str(node.target))
            if not any(r in name for r in ("rand", "bernoulli", "normal",
                                           "uniform", "dropout")):
                constant.add(node)
    return constant


def _evaluate(gm, node, values):
    """The value of a constant node (see _constant_nodes), computed from
    its inputs' (the graph's meta values are fake tensors)."""
    if node in values:
        return values[node]
    if node.op == "get_attr":
        value = getattr(gm, node.target)
    else:
        def arg(a):
            return _evaluate(gm, a, values) if isinstance(
                a, torch.fx.Node) else a
        args = torch.fx.node.map_aggregate(node.args, arg)
        kwargs = torch.fx.node.map_aggregate(node.kwargs, arg)
        with torch.no_grad():
            value = node.target(*args, **kwargs)
    values[node] = value
    return value


def _iota_axis(value, size, rank):
    """The axis of a value broadcast to rank `rank` along which it is
    0, 1, ..., size - 1 (and constant along every other axis), or None."""
    if not isinstance(value, torch.Tensor) or value.is_floating_point() or \
            value.dim() > rank or value.dtype == torch.bool:
        return None
    shape = [1] * (rank - value.dim()) + list(value.shape)
    axes = [a for a, s in enumerate(shape) if s != 1]
    if size == 1:
        return None if value.numel() != 1 or int(value.reshape(())) != 0 \
            else -1  # any axis: decided by the caller
    if len(axes) != 1 or shape[axes[0]] != size:
        return None
    if not torch.equal(value.reshape(-1).to(torch.int64),
                       torch.arange(size)):
        return None
    return axes[0]


def _rewrite_index(gm, node, constant, values):
    """Replaces `node` (aten.index.Tensor) by a permutation, view and
    expansion of its input when every index is an iota (see the module's
    docstring); returns whether it did."""
    graph = gm.graph
    source, indices = node.args[0], node.args[1]
    value = source.meta.get("val")
    out = node.meta.get("val")
    if not isinstance(value, torch.Tensor) or not isinstance(
            out, torch.Tensor) or len(indices) != value.dim() or \
            any(i is None or i not in constant for i in indices):
        return False
    rank = out.dim()
    axes = []
    for k, index in enumerate(indices):
        axis = _iota_axis(_evaluate(gm, index, values), value.shape[k],
                          rank)
        if axis is None:
            return False
        axes.append(axis)
    taken = {a for a in axes if a >= 0}
    free = [a for a in range(rank) if a not in taken]
    # Dimensions of size 1: any free axis of the result of size 1 (or a new
    # one in front, which the view below makes).
    for k, a in enumerate(axes):
        if a < 0:
            axes[k] = free.pop(0) if free else None
            if axes[k] is None:
                return False
    if len(set(axes)) != len(axes):
        return False
    order = sorted(range(len(axes)), key=lambda k: axes[k])
    shape = [1] * rank
    for k in range(len(axes)):
        shape[axes[k]] = value.shape[k]
    with graph.inserting_before(node):
        permuted = graph.call_function(aten.permute.default,
                                       (source, order))
        viewed = graph.call_function(aten.view.default, (permuted, shape))
        expanded = graph.call_function(aten.expand.default,
                                       (viewed, list(out.shape)))
    permuted.meta["val"] = value.permute(order)
    viewed.meta["val"] = permuted.meta["val"].reshape(shape)
    expanded.meta["val"] = viewed.meta["val"].expand(out.shape)
    _replace(graph, node, expanded, (permuted, viewed, expanded))
    return True


def _replace(graph, node, result, news):
    """Replaces `node` by `result`, the last of the nodes `news` built for
    it, which keep its stack trace (the user's line of a refusal)."""
    for new in news:
        if "stack_trace" in node.meta:
            new.meta["stack_trace"] = node.meta["stack_trace"]
    node.replace_all_uses_with(result)
    graph.erase_node(node)


def _contiguous_strides(size):
    """The strides of a contiguous tensor of `size`."""
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def _dense_window(node):
    """(offset, numel) of the window that an as_strided(_scatter) node
    reads or writes, when it is a dense window of a contiguous base that
    starts its storage (see the module's docstring); else None."""
    base = node.args[0].meta.get("val") if isinstance(
        node.args[0], torch.fx.Node) else None
    scatter = node.target == aten.as_strided_scatter.default
    size, stride = node.args[2:4] if scatter else node.args[1:3]
    rest = node.args[4:] if scatter else node.args[3:]
    offset = node.kwargs.get("storage_offset", rest[0] if rest else None)
    offset = offset or 0
    if not isinstance(base, torch.Tensor) or not base.is_contiguous() or \
            base.storage_offset() != 0 or not all(
                isinstance(v, int) for v in list(size) + list(stride) +
                [offset]):
        return None
    if any(n != 1 and s != e for n, s, e in zip(
            size, stride, _contiguous_strides(size))):
        return None
    numel = 1
    for n in size:
        numel *= n
    if offset + numel > base.numel():
        return None
    return offset, numel


def _rewrite_as_strided(gm, node):
    """Replaces an aten.as_strided(_scatter) node of a dense window by a
    slice (slice_scatter) of the flattened base; returns whether it did."""
    window = _dense_window(node)
    if window is None:
        return False
    offset, numel = window
    graph = gm.graph
    base = node.args[0]
    value = base.meta["val"]
    flat_value = value.reshape(-1)
    news = []

    def add(target, args, val):
        new = graph.call_function(target, args)
        new.meta["val"] = val
        news.append(new)
        return new

    with graph.inserting_before(node):
        flat = add(aten.view.default, (base, [-1]), flat_value)
        if node.target == aten.as_strided.default:
            size = list(node.args[1])
            window_value = flat_value[offset:offset + numel]
            sliced = add(aten.slice.Tensor, (flat, 0, offset,
                                             offset + numel), window_value)
            result = add(aten.view.default, (sliced, size),
                         window_value.reshape(size))
        else:
            src = node.args[1]
            src_flat = add(aten.view.default, (src, [-1]),
                           src.meta["val"].reshape(-1))
            scattered = add(aten.slice_scatter.default,
                            (flat, src_flat, 0, offset, offset + numel),
                            flat_value.clone())
            result = add(aten.view.default, (scattered, list(value.shape)),
                         value.clone())
    _replace(graph, node, result, news)
    return True


def rewrite_graph(gm):
    """The rewrites above on the traced module's graph (in place); those of
    per-sample indexing (_gathers, which builds on this module's helpers)
    run after it (_export)."""
    graph = gm.graph
    constant = _constant_nodes(graph)
    values = {}
    changed = False
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target == aten.index.Tensor:
            changed |= _rewrite_index(gm, node, constant, values)
        elif node.op == "call_function" and node.target in (
                aten.as_strided.default, aten.as_strided_scatter.default):
            changed |= _rewrite_as_strided(gm, node)
    if changed:
        graph.eliminate_dead_code()
        gm.recompile()
    return gm
