"""Per-sample indexing as comparisons with an iota.

`logits[torch.arange(B), last]` (the reward model's pooling, transformers'
*ForSequenceClassification, CLIP's `last_hidden_state[arange(B),
input_ids.argmax(-1)]`) reads each sample's row at a position computed
from that sample. torch-mlir lowers it to a gather whose batch coordinate
is read from the constant arange (which --ga-accumulate cannot relate to
its loops), and its backward, `index_put` with accumulation, to a scatter
(tm_tensor.scatter): the step is refused.

An aten.index.Tensor or aten.index_put whose indices include one that is
proven to be the position along its own dimension (a constant of the trace,
computed from shapes alone, that is 0, 1, ..., n - 1 along one axis of the
indices' broadcast shape, n the size of the dimension it indexes: the
arange over the batch) is rewritten here into the same values without a
gather: that dimension becomes a plain dimension of the result, at the
arange's axis, and every other index selects within it by a comparison
with an iota, `where(index == iota, x, 0).sum(...)` for the read, `where(
index == iota, values, x)` (or `x + where(...)`, summed over the index
axes that are not positions, with accumulation) for the write. Each sum
has one non-zero term per position read: the result is the element itself
(non-finite elements elsewhere included), and with accumulation the sum of
the values written to the same position (in another order than PyTorch's
kernel when several are: within rounding).

The batch analysis then sees element-wise comparisons and a reduction
within the sample, so micro-batches (a remainder included) slice the batch
dimension like any other: no constant of the batch's size is left. An
index that reads another sample (a data-dependent index into the batch
dimension) is not rewritten and stays refused at its line. Negative indices
count from the end, as in PyTorch; an index out of range selects nothing
(zeros) instead of raising PyTorch's error.
"""

import torch

from ._rewrites import _constant_nodes, _evaluate, _iota_axis

aten = torch.ops.aten


def _layout(indices, rank):
    """(advanced dimensions, slice dimensions, whether the advanced ones are
    adjacent) of an index list of aten.index.Tensor into a rank-`rank`
    tensor (missing trailing indices are slices)."""
    advanced = [k for k, i in enumerate(indices) if i is not None]
    sliced = [k for k in range(rank) if k >= len(indices) or
              indices[k] is None]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    return advanced, sliced, adjacent


def _aligned(x, iotas, general, sliced, nbroadcast):
    """x permuted to [iota dims (in the order of their axes), general dims,
    slice dims], each iota dim moved to its axis of a rank-`nbroadcast`
    prefix (size 1 at the other axes): shape P + [S_g] + [S_s]. Also the
    permutation applied."""
    by_axis = sorted(iotas, key=lambda k: iotas[k])
    order = by_axis + general + sliced
    y = x.permute(order)
    for axis in range(nbroadcast):
        if axis not in iotas.values():
            y = y.unsqueeze(axis)
    return y, order


def _hot(x, general, general_indices, shape, nsliced):
    """The comparison of the general indices (broadcast to `shape`) with
    iotas along their dimensions: bool of shape shape + [S_g] + [1] *
    nsliced, true where every index selects the position."""
    hot = None
    ng = len(general)
    for n, (dim, index) in enumerate(zip(general, general_indices)):
        size = x.shape[dim]
        index = torch.where(index < 0, index + size, index).expand(shape)
        view = [1] * ng + [1] * nsliced
        view[n] = size
        iota = torch.arange(size, device=index.device).view(view)
        cmp = index.reshape(list(shape) + [1] * (ng + nsliced)) == iota
        hot = cmp if hot is None else hot & cmp
    return hot


def _result_order(nbroadcast, sliced, advanced, adjacent):
    """The permutation from [broadcast axes, slice dims] to aten.index's
    result layout (the broadcast axes where the adjacent advanced indices
    were, else in front)."""
    before = [s for s in sliced if s < advanced[0]] if adjacent else []
    nb = len(before)
    return (list(range(nbroadcast, nbroadcast + nb)) +
            list(range(nbroadcast)) +
            list(range(nbroadcast + nb, nbroadcast + len(sliced))))


def _index_read(iotas, indices, shape):
    """aten.index.Tensor(x, indices) as a comparison with iotas (the
    module's docstring): fn(x, *general indices). Of `indices` only which
    are None (slices) matters; `iotas` maps the iotas' dimensions to their
    axes of the indices' broadcast `shape`."""
    def read(x, *general_indices):
        advanced, sliced, adjacent = _layout(indices, x.dim())
        general = [k for k in advanced if k not in iotas]
        y, _ = _aligned(x, iotas, general, sliced, len(shape))
        hot = _hot(x, general, general_indices, shape, len(sliced))
        ng = len(general)
        picked = torch.where(hot, y, 0).sum(
            list(range(len(shape), len(shape) + ng)))
        return picked.permute(_result_order(len(shape), sliced, advanced,
                                            adjacent))
    return read


def _index_write(iotas, indices, shape, accumulate):
    """aten.index_put(x, indices, values, accumulate) as a comparison with
    iotas: fn(x, values, *general indices) (see _index_read); None where
    it cannot be written so (several values may land on one position
    without accumulation: an axis of the indices that no iota spans)."""
    def write(x, values, *general_indices):
        advanced, sliced, adjacent = _layout(indices, x.dim())
        general = [k for k in advanced if k not in iotas]
        nb, ng = len(shape), len(general)
        y, order = _aligned(x, iotas, general, sliced, nb)
        hot = _hot(x, general, general_indices, shape, len(sliced))
        # The values in the result's layout of the read, then as
        # [broadcast axes, slice dims].
        result_shape = [x.shape[s] for s in sliced]
        result = _result_order(nb, sliced, advanced, adjacent)
        full = [*shape, *result_shape]
        laid = [full[a] for a in result]
        inverse = [result.index(a) for a in range(len(result))]
        v = values.expand(laid).permute(inverse)
        v = v.reshape(list(shape) + [1] * ng + result_shape)
        others = [a for a in range(nb) if a not in iotas.values()]
        if accumulate:
            term = torch.where(hot, v, 0).to(x.dtype)
            if others:
                term = term.sum(others)
            out = term.permute([order.index(k) for k in range(x.dim())])
            return x + out
        # Every axis of the indices is an iota's: y has their shape.
        out = torch.where(hot, v.to(x.dtype), y)
        return out.permute([order.index(k) for k in range(x.dim())])
    if not accumulate and len(shape) != len(iotas):
        return None
    return write


def _classify(gm, node, constant, values, x, indices):
    """({dim: axis} of the iota indices, broadcast shape) of the advanced
    index `indices` into `x` (meta values), or None unless at least one
    index is an iota and one is not (see the module's docstring)."""
    if not isinstance(indices, (list, tuple)) or not indices or \
            len(indices) > x.dim():
        return None
    metas = [None if i is None else i.meta.get("val") for i in indices]
    if any(i is not None and (not isinstance(m, torch.Tensor) or
                              m.dtype in (torch.bool, torch.uint8) or
                              m.is_floating_point())
           for i, m in zip(indices, metas)):
        return None
    shape = list(torch.broadcast_shapes(*[m.shape for m in metas
                                          if m is not None]))
    iotas = {}
    for k, index in enumerate(indices):
        if index is None or index not in constant:
            continue
        axis = _iota_axis(_evaluate(gm, index, values), x.shape[k],
                          len(shape))
        if axis is not None and axis >= 0 and axis not in iotas.values():
            iotas[k] = axis
    general = [k for k, i in enumerate(indices)
               if i is not None and k not in iotas]
    if not iotas or not general:
        return None
    return iotas, shape


def _splice(gm, node, fn, inputs):
    """Replaces `node` by the graph of fn(*inputs) (traced on the inputs'
    meta values), every new node with `node`'s stack trace."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    # Fake inputs of one mode of their own (the graph's may come from
    # several: make_fx makes one per node unless _export shares one).
    with FakeTensorMode(allow_fallback_kernels=True):
        metas = [torch.empty_strided(m.shape, m.stride(), dtype=m.dtype,
                                     device=m.device)
                 for m in (i.meta["val"] for i in inputs)]
        sub = make_fx(fn, tracing_mode="real")(*metas)
    graph = gm.graph
    env = {}
    placeholders = iter(inputs)
    out = None
    with graph.inserting_before(node):
        for n in sub.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(placeholders)
            elif n.op == "output":
                out = env[n.args[0]]
            else:
                new = graph.node_copy(n, lambda a: env[a])
                if n.op == "get_attr":  # a constant made while tracing fn
                    name = f"_gathers_{len(gm._buffers)}_{n.target}"
                    gm.register_buffer(name, getattr(sub, n.target))
                    new.target = name
                if "stack_trace" in node.meta:
                    new.meta["stack_trace"] = node.meta["stack_trace"]
                env[n] = new
    node.replace_all_uses_with(out)
    graph.erase_node(node)


def rewrite_per_sample_indexing(gm):
    """The rewrites of the module's docstring on `gm`'s graph (in place);
    returns whether any was made."""
    graph = gm.graph
    constant = _constant_nodes(graph)
    values = {}
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in (
                aten.index.Tensor, aten.index_put.default,
                aten._unsafe_index_put.default):
            continue
        source, indices = node.args[0], node.args[1]
        x = source.meta.get("val")
        if not isinstance(x, torch.Tensor):
            continue
        found = _classify(gm, node, constant, values, x, indices)
        if found is None:
            continue
        iotas, shape = found
        general = [i for k, i in enumerate(indices)
                   if i is not None and k not in iotas]
        if node.target == aten.index.Tensor:
            _splice(gm, node, _index_read(iotas, indices, shape),
                    [source, *general])
        else:
            accumulate = node.args[3] if len(node.args) > 3 else \
                node.kwargs.get("accumulate", False)
            fn = _index_write(iotas, indices, shape, accumulate)
            if fn is None:
                continue
            _splice(gm, node, fn, [source, node.args[2], *general])
        changed = True
    if changed:
        graph.eliminate_dead_code()
        gm.recompile()
    return changed


def _iota_along(size, dim, rank, device):
    """arange(size) viewed along dimension `dim` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[dim] = size
    return torch.arange(size, device=device).view(shape)


def _scatter_add(self, dim, index, src):
    """aten.scatter_add (the backward of torch.gather) as a comparison with
    an iota and a sum over the index's positions along `dim` (torch-mlir
    lowers it to a scatter): out[..., i, ...] = self[..., i, ...] + the sum
    of src[..., k, ...] over the k with index[..., k, ...] == i, the other
    dimensions positional as in PyTorch (so a gather along another
    dimension than the batch's stays within the sample)."""
    if self.dim() == 0:
        return NotImplemented
    dim %= self.dim()
    size = self.shape[dim]
    src = src[tuple(slice(0, n) for n in index.shape)]
    hot = index.unsqueeze(dim + 1) == _iota_along(size, dim + 1,
                                                  index.dim() + 1,
                                                  index.device)
    term = torch.where(hot, src.unsqueeze(dim + 1), 0).sum(dim)
    pad = []
    for d in reversed(range(self.dim())):
        pad += [0, self.shape[d] - term.shape[d]]
    if any(pad):
        term = torch.nn.functional.pad(term, pad)
    return self + term.to(self.dtype)


def _index_add(self, dim, index, source, alpha=1):
    """aten.index_add (the backward of index_select) as a comparison of the
    1-d index with an iota and a sum over its positions (torch-mlir lowers
    it to a scatter)."""
    if self.dim() == 0:
        return NotImplemented
    dim %= self.dim()
    size = self.shape[dim]
    index = torch.where(index < 0, index + size, index)
    hot = index.view([1] * dim + [-1, 1] + [1] * (self.dim() - dim - 1)) \
        == _iota_along(size, dim + 1, self.dim() + 1, index.device)
    term = torch.where(hot, source.unsqueeze(dim + 1), 0).sum(dim)
    if alpha != 1:
        term = term * alpha
    return self + term.to(self.dtype)


def scatter_decompositions():
    """{op: decomposition} of the writes by index above, for the trace's
    decomposition table."""
    return {aten.scatter_add.default: _scatter_add,
            aten.index_add.default: _index_add}
