"""The expert loop rule of mixture-of-experts layers, applied as the step is
traced.

transformers' eager experts (Mixtral's `experts_implementation="eager"`,
DBRX's DbrxExperts) loop over the experts that the batch routes to:

  mask = one_hot(ids, C).permute(2, 1, 0)        # ids [T, k] from topk
  hit = greater(mask.sum((-1, -2)), 0).nonzero()  # the experts hit
  for e in hit:
      e = e[0]
      if e == C - 1: continue                     # an id topk never gives
      pos, token = torch.where(mask[e])           # e's token-expert pairs
      y = act(linear(h[token], W1[e])) ...        # e's matrices
      final.index_add_(0, token, y * w[token, pos, None])

The number of passes, and the rows of each, are data. The rule: the list of
the experts hit is "every expert at once" and the loop runs once; its
variable is "every expert", `mask[e]` the mask of every class, and
`torch.where` of it every pair (t, j) of the ids in token order (the pair
index of the token, of the position). Rows gathered by the pair index are
the pairs' rows (h[token] each token repeated k times, w[token, pos] the
weights in token order), element-wise operations and views that keep the
rows keep that state, a per-expert table indexed by the loop variable
(W1[e], possibly after .view(-1, F, d) as in DBRX, .T of it) is the matrix
of each row's own expert (a product of the rows by it is
ga_mlir::grouped_mm_rows with the ids as group ids; element-wise, its row
of each pair's expert), and `index_add_(0, token, rows)` the sum over each
token's pairs, added to its row (per token: the micro-batch split is exact,
and the work is T * k rows in all, only the ids are data). The values are
PyTorch's; the sum over a token's experts is in token order, not in the
experts' (rounding). A comparison of the loop variable with a constant that
the ids never take (Mixtral's extra class: ids from topk over E < C - 1
classes) is False.

Anything else that touches these values is refused at its line: the list
of the experts hit read (its length, its shape, a second row), the loop
variable read as a number or compared with an id the ids may take, a
reduction across the pairs' rows or their count read, the per-expert table
used other than by row, a write in the loop other than the index_add_ by
the pairs' tokens (PyTorch makes it once per expert hit, the compiled loop
once), a `break`, or a value of the loop used after it.
"""

import sys

import torch

from ._common import CompileError
from ._locations import current_user_line
from ._permutation import (_ELEMENTWISE, _METADATA, _entries, _name,
                           _tensors, refuse)

# The attribute that carries a traced tensor's part in the rule.
_TAG = "_ga_expert_loop"

# Tags that do not make a use a refusal (a use the rule does not know just
# leaves them behind): ids of a known range, a one-hot of ids and the
# classes it hits, a comparison proven constant.
_WEAK = frozenset(("ids", "onehot", "hit", "never"))

# Functions of integer ids that keep them the ids (of the same range).
_ID_VIEWS = frozenset("""
    view reshape flatten long int to contiguous clone detach squeeze
    unsqueeze
    """.split())

# Per-row reductions and normalizations: fine along dimensions other than
# the rows.
_ROW_REDUCTIONS = frozenset("""
    sum mean amax amin softmax log_softmax norm
    """.split())

# Views of pair rows that keep each row's elements in it.
_ROW_VIEWS = frozenset("""
    view reshape flatten unsqueeze squeeze chunk split unflatten
    """.split())


class _Tag:
    """What a traced tensor is for the rule: `kind` one of ids (integer ids
    below info["bound"]), onehot (a one-hot of ids: info["axes"], the ids'
    dimension of each of its dimensions or "class"), hit (classes counted
    from a one-hot), never (a comparison of the loop variable proven
    constant: info["value"]), hits (the list of the experts hit), row (its
    row), expert (the loop variable), mask (the one-hot at the loop
    variable: info["axes"]), pairs (the pair index of the ids' dimension
    info["axis"]), rows (a value of each pair, in token order), table (a
    per-expert table at the loop variable: info["table"], info["t"]
    whether transposed)."""

    def __init__(self, kind, loop=None, **info):
        self.kind, self.loop, self.info = kind, loop, info


class _Loop:
    """One loop over the experts hit: the one-hot's ids, their bound, the
    line of the list of the experts hit and the loop's state (before, body,
    ended, broken)."""

    def __init__(self, ids, bound, line):
        self.ids, self.bound, self.line = ids, bound, line
        self.pairs = ids.numel()
        self.state, self.exit_line = "before", None


class _LoopRows(tuple):
    """The rows of the list of the experts hit (its unbind): one row, and
    the loop's state as Python iterates over it (the body between the row
    and the next step of the iteration; a `break` closes the iterator)."""

    def __iter__(self):
        loop = _tag(self[0]).loop
        loop.state = "body"
        try:
            yield self[0]
        except GeneratorExit:
            loop.state, loop.exit_line = "broken", current_user_line()
            raise
        loop.state = "ended"


def _tag(t):
    return getattr(t, _TAG, None) if isinstance(t, torch.Tensor) else None


def _tagged(value, kind, loop=None, **info):
    setattr(value, _TAG, _Tag(kind, loop, **info))
    return value


def _refuse(loop, what):
    refuse(what,
           f" (the experts hit at {loop.line})" if loop is not None else "",
           "a loop over the "
           "experts a batch routes to is compiled as one pass over every "
           "token-expert pair in token order (each pair's rows times its own "
           "expert's matrices, added back to its token by index_add_), which "
           "holds only while nothing reads which experts were hit, how many "
           "pairs each has, or across the pairs; this use would depend on the "
           "routing of the whole batch, which a micro-batch cannot see")


def _dim_arg(args, kwargs, position, default=None):
    return kwargs.get("dim", args[position] if len(args) > position
                      else default)


def _property(func):
    """The name of the tensor property `func` gets (Tensor.T.__get__: T)."""
    owner = getattr(func, "__self__", None)
    return getattr(owner, "__name__", None)


class ExpertLoops:
    """The rule as a handler of the torch functions of a trace (called by
    _moe.ExpertProducts before it runs a function): `handle(func, args,
    kwargs)` returns NotImplemented when the rule has nothing to do with
    the call, else its result. `one_hot(inner)` wraps F.one_hot to tag its
    result. `rows_product(rows, table, ids)` traces the product of each row
    by its own expert's matrix (_moe's, given by it: _moe imports this
    module)."""

    def __init__(self, rows_product):
        self.loops = []
        self.rows_product = rows_product

    def one_hot(self, inner):
        def one_hot(ids, num_classes=-1):
            result = inner(ids, num_classes)
            if isinstance(num_classes, int) and num_classes > 0:
                tag = _tag(ids)
                bound = tag.info["bound"] if tag is not None and \
                    tag.kind == "ids" else num_classes
                _tagged(result, "onehot", ids=ids, bound=min(
                    bound, num_classes), axes=tuple(range(ids.dim())) +
                    ("class",))
            return result
        return one_hot

    def handle(self, func, args, kwargs):
        name = _name(func)
        broken = next((lp for lp in self.loops if lp.state == "broken"),
                      None)
        if broken is not None:
            self.loops.remove(broken)
        if broken is not None and sys.exc_info()[1] is None:
            # (Closed by an exception on its way out: not a break.)
            raise CompileError(
                f"{broken.exit_line}: error: the loop over the experts hit "
                f"(at {broken.line}) left before its end (break): PyTorch "
                "serves only the experts before it, which depends on the "
                "routing of the whole batch; the compiled loop serves every "
                "expert at once",
                code="moe-routing")
        tags = [(t, _tag(t)) for t in _tensors((args, kwargs))]
        tags = [(t, tag) for t, tag in tags if tag is not None]
        if name in ("topk", "argmax") and not tags:
            return self._ids(func, name, args, kwargs)
        self._check_body_write(name, args, kwargs)
        if not tags:
            return NotImplemented
        strong = [tag for _, tag in tags if tag.kind not in _WEAK]
        if not strong:
            return self._weak(func, name, args, kwargs, tags)
        loop = strong[0].loop
        if any(tag.loop is not loop for tag in strong):
            _refuse(loop, f"{name} mixes the values of two expert loops")
        if loop.state == "ended":
            _refuse(loop, f"a value of the loop over the experts reaches "
                    f"{name} after the loop")
        return self._strong(func, name, args, kwargs, loop)

    # ---------------------------------------------------------- weak tags
    def _ids(self, func, name, args, kwargs):
        """topk's indices (argmax's): ids below the size of the dimension
        they pick along."""
        result = func(*args, **kwargs)
        x = args[0]
        dim = _dim_arg(args, kwargs, 2 if name == "topk" else 1,
                       -1 if name == "topk" else None)
        if not isinstance(x, torch.Tensor) or x.dim() == 0 or \
                not isinstance(dim, int):
            return result
        indices = result[1] if name == "topk" else result
        _tagged(indices, "ids", bound=x.shape[dim])
        return result

    def _weak(self, func, name, args, kwargs, tags):
        first, tag = tags[0]
        kinds = [t.kind for _, t in tags]
        if name == "__bool__" and kinds == ["never"]:
            return tag.info["value"]
        if kinds == ["ids"] and name in _ID_VIEWS and args[0] is first:
            result = func(*args, **kwargs)
            if isinstance(result, torch.Tensor) and \
                    not result.dtype.is_floating_point and \
                    result.numel() == first.numel():
                _tagged(result, "ids", bound=tag.info["bound"])
            return result
        if kinds == ["onehot"] and args and args[0] is first:
            return self._one_hot_use(func, name, args, kwargs, tag)
        if kinds == ["hit"] and args and args[0] is first:
            return self._hit_use(func, name, args, kwargs, tag)
        return NotImplemented

    def _one_hot_use(self, func, name, args, kwargs, tag):
        """Permutes, conversions and the sum over the ids' dimensions of a
        one-hot (the count of each class)."""
        x, axes = args[0], tag.info["axes"]
        new = None
        if name == "permute":
            dims = args[1] if len(args) == 2 and \
                isinstance(args[1], (tuple, list)) else args[1:]
            dims = kwargs.get("dims", dims)
            new = tuple(axes[d % x.dim()] for d in dims)
        elif name in ("transpose", "swapaxes") and len(args) == 3:
            a, b = args[1] % x.dim(), args[2] % x.dim()
            new = list(axes)
            new[a], new[b] = new[b], new[a]
        elif name in ("to", "float", "long", "int", "bool", "contiguous",
                      "half", "double"):
            new = axes
        elif name == "sum":
            dims = _dim_arg(args, kwargs, 1)
            dims = (dims,) if isinstance(dims, int) else dims
            if dims is not None and not kwargs.get("keepdim") and \
                    len(args) < 3:
                kept = [a for d, a in enumerate(axes)
                        if d not in {i % x.dim() for i in dims}]
                if kept == ["class"]:
                    return _tagged(func(*args, **kwargs), "hit", **tag.info)
        if new is None:
            return NotImplemented
        return _tagged(func(*args, **kwargs), "onehot",
                       **dict(tag.info, axes=tuple(new)))

    def _hit_use(self, func, name, args, kwargs, tag):
        """A comparison of the classes' counts with 0 (still which classes
        were hit); their nonzero: the loop over them, run once."""
        if name in ("greater", "gt", "__gt__", "ne", "__ne__",
                    "not_equal") and len(args) == 2 and args[1] == 0:
            return _tagged(func(*args, **kwargs), "hit", **tag.info)
        if name in ("nonzero", "argwhere") and len(args) == 1 and \
                not kwargs.get("as_tuple"):
            loop = _Loop(tag.info["ids"], tag.info["bound"],
                         current_user_line())
            self.loops.append(loop)
            return _tagged(torch.zeros((1, 1), dtype=torch.int64), "hits",
                           loop)
        return NotImplemented

    def _check_body_write(self, name, args, kwargs):
        """Refuses an in-place write, inside a loop's body, to a value the
        rule does not know (it would be made once per expert hit)."""
        loop = next((lp for lp in self.loops if lp.state == "body"), None)
        if loop is None or name in ("index_add_", "__setitem__") and \
                args and _tag(args[0]) is None and any(
                    _tag(t) is not None and _tag(t).kind == "pairs"
                    for t in _tensors(args[1:])):
            return
        inplace = name.endswith("_") and not name.startswith("__") or \
            name in ("__iadd__", "__isub__", "__imul__", "__itruediv__",
                     "__setitem__") or "out" in kwargs
        if inplace and args and isinstance(args[0], torch.Tensor) and \
                _tag(args[0]) is None:
            _refuse(loop, f"{name} writes a value in the loop over the "
                    "experts hit other than by index_add_ at the pairs' "
                    "tokens (PyTorch writes it once per expert hit, the "
                    "compiled loop once)")

    # -------------------------------------------------------- strong tags
    def _strong(self, func, name, args, kwargs, loop):
        first = next(t for t in _tensors((args, kwargs))
                     if _tag(t) is not None and _tag(t).kind not in _WEAK)
        kind = _tag(first).kind
        if name == "__get__" and _property(func) in ("T", "mT") and \
                kind == "table":
            return self._transposed(first, loop)
        if name in ("dim", "is_floating_point", "get_device") or \
                name == "__get__" and _property(func) in (
                    "dtype", "device", "requires_grad", "ndim", "is_cuda"):
            return func(*args, **kwargs)
        if name in ("__getitem__", "index_select"):
            return self._index(func, name, args, kwargs, loop)
        if name in ("index_add_", "index_add"):
            return self._index_add(name, args, kwargs, loop)
        if kind == "hits" and name == "unbind" and \
                _dim_arg(args, kwargs, 1, 0) == 0:
            row = _tagged(torch.zeros((1,), dtype=torch.int64), "row", loop)
            return _LoopRows((row,))
        if kind == "expert" and name in ("__eq__", "eq", "__ne__", "ne"):
            return self._compare(name, args, loop)
        if kind == "mask" and (name == "where" and len(args) == 1 or
                               name == "nonzero" and
                               kwargs.get("as_tuple")):
            return self._where(first, loop)
        if kind == "table" and name in ("t", "transpose", "swapaxes") and \
                first.dim() == 2:
            return self._transposed(first, loop)
        if name in ("linear", "matmul", "__matmul__", "mm"):
            return self._product(name, args, kwargs, loop)
        kinds = {_tag(t).kind for t in _tensors((args, kwargs))
                 if _tag(t) is not None and _tag(t).kind not in _WEAK}
        if kinds <= {"rows", "table"} and "rows" in kinds:
            return self._rows(func, name, args, kwargs, loop)
        what = {"hits": "the list of the experts hit",
                "row": "a row of the list of the experts hit",
                "expert": "the loop variable over the experts hit",
                "mask": "the one-hot mask at the loop variable",
                "pairs": "the pair index of torch.where",
                "rows": "the rows of the loop's token-expert pairs",
                "table": "a per-expert table at the loop variable"}[kind]
        if name == "__get__":
            name = f".{_property(func)}"
        return _refuse(loop, f"{what} reaches {name}")

    def _compare(self, name, args, loop):
        other = args[1] if len(args) > 1 else None
        if isinstance(other, bool) or not isinstance(other, int) or \
                0 <= other < loop.bound:
            _refuse(loop, "the loop variable over the experts hit compared "
                    f"with {other!r}, an id the ids may take (only ids "
                    f"from topk or argmax over {loop.bound} classes are "
                    "known never to equal a larger one)")
        value = name in ("__ne__", "ne")
        return _tagged(torch.tensor(value), "never", value=value)

    def _transposed(self, x, loop):
        tag = _tag(x)
        return _tagged(x.transpose(-1, -2), "table", loop,
                       table=tag.info["table"], t=not tag.info["t"])

    def _where(self, mask, loop):
        """Every pair of the ids in token order: for each of the mask's
        dimensions, the index of its ids' dimension."""
        ids = loop.ids
        out = []
        for axis in _tag(mask).info["axes"]:
            shape = [1] * ids.dim()
            shape[axis] = ids.shape[axis]
            index = torch.arange(ids.shape[axis]).view(shape).expand(
                ids.shape).reshape(-1)
            out.append(_tagged(index, "pairs", loop, axis=axis))
        return tuple(out)

    def _index(self, func, name, args, kwargs, loop):
        if name == "index_select":
            x, dim, index = args[0], args[1], args[2]
            if dim % max(x.dim(), 1) != 0 or _tag(x) is not None:
                _refuse(loop, "an index_select by the pair index other "
                        "than of rows")
            return self._gather(x, [index], loop)
        x, index = args
        source, entries = _tag(x), _entries(index)
        tensors = [e for e in entries if isinstance(e, torch.Tensor)]
        kinds = [_tag(e).kind if _tag(e) else None for e in tensors]
        if source is not None and source.kind == "hits":
            return _refuse(loop, "the list of the experts hit indexed")
        if source is not None and source.kind == "row" and entries == [0]:
            return _tagged(torch.zeros((), dtype=torch.int64), "expert",
                           loop)
        if kinds == ["expert"] and len(entries) == 1:
            return self._at_expert(x, loop)
        if source is not None and source.kind == "rows" and not tensors:
            return self._rows(func, name, args, kwargs, loop)
        if source is None or source.kind in _WEAK and source.kind != \
                "onehot":
            if kinds and kinds[0] == "pairs":
                return self._gather(x, entries, loop)
        return _refuse(loop, "an indexing by or of a value of the loop over "
                       "the experts hit other than the rule's (x[e] of a "
                       "per-expert table or of the one-hot, x[token], "
                       "w[token, pos], a view of every pair's row)")

    def _at_expert(self, x, loop):
        """x[e]: a one-hot's mask of every class, or a per-expert table."""
        tag = _tag(x)
        if tag is not None and tag.kind == "onehot":
            axes = tag.info["axes"]
            if axes[0] != "class" or "class" in axes[1:]:
                _refuse(loop, "a one-hot indexed by the loop variable along "
                        "another dimension than its classes")
            return _tagged(torch.zeros(x.shape[1:], dtype=x.dtype), "mask",
                           loop, axes=axes[1:])
        if tag is not None or x.dim() < 2 or x.shape[0] < loop.bound:
            _refuse(loop, "a tensor indexed by the loop variable that is "
                    f"not a per-expert table of {loop.bound} or more rows")
        return _tagged(x[0], "table", loop, table=x, t=False)

    def _gather(self, x, entries, loop):
        """x[index of the ids' dimensions a, b, ..., rest]: each pair's row
        (x's first dimensions read at the pair's ids position)."""
        axes = []
        for e in entries:
            tag = _tag(e) if isinstance(e, torch.Tensor) else None
            if tag is None or tag.kind != "pairs":
                break
            axes.append(tag.info["axis"])
        rest = entries[len(axes):]
        ids = loop.ids
        if len(set(axes)) != len(axes) or x.dim() < len(axes) or any(
                isinstance(e, torch.Tensor) for e in rest) or any(
                x.shape[i] != ids.shape[a] for i, a in enumerate(axes)):
            _refuse(loop, "a gather by the pair index other than of a "
                    "tensor whose leading dimensions are the ids' "
                    "(x[token], w[token, pos, None])")
        m = len(axes)
        order = sorted(range(m), key=lambda i: axes[i])
        y = x.permute(*order, *range(m, x.dim()))
        shape = [1] * ids.dim()
        for a in axes:
            shape[a] = ids.shape[a]
        tail = list(x.shape[m:])
        y = y.reshape(*shape, *tail).expand(*ids.shape, *tail).reshape(
            loop.pairs, *tail)
        if rest:
            y = y[(slice(None), *rest)]
        return _tagged(y, "rows", loop)

    def _index_add(self, name, args, kwargs, loop):
        """final.index_add_(0, token, rows): each token's pairs summed,
        added to its row."""
        target, dim, index, source = args[:4]
        alpha = kwargs.get("alpha", args[4] if len(args) > 4 else 1)
        tag, ids = _tag(index), loop.ids
        if _tag(target) is not None or dim % max(target.dim(), 1) != 0 or \
                tag is None or tag.kind != "pairs" or \
                _tag(source) is None or _tag(source).kind != "rows" or \
                target.shape[0] != ids.shape[tag.info["axis"]] or \
                target.shape[1:] != source.shape[1:]:
            _refuse(loop, f"{name} other than of the pairs' rows at the "
                    "pair index into a tensor of the ids' rows")
        y = source.reshape(*ids.shape, *source.shape[1:]).movedim(
            tag.info["axis"], 0)
        if ids.dim() > 1:
            y = y.sum(tuple(range(1, ids.dim())))
        if alpha != 1:
            y = y * alpha
        return target.add_(y) if name == "index_add_" else target + y

    def _product(self, name, args, kwargs, loop):
        """rows @ W[e] (linear: rows @ W[e]^T): each row times its own
        expert's matrix, a grouped product by the ids."""
        rows, matrix = args[0], args[1]
        bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
        r, m = _tag(rows), _tag(matrix)
        if r is None or r.kind != "rows" or m is None or \
                m.kind != "table" or rows.dim() != 2 or matrix.dim() != 2 \
                or name != "linear" and bias is not None:
            _refuse(loop, f"{name} other than of the pairs' rows by a "
                    "per-expert matrix at the loop variable")
        table = m.info["table"]
        if (name == "linear") != m.info["t"]:
            table = table.transpose(-1, -2)
        if table.shape[1] != rows.shape[1]:
            _refuse(loop, f"{name} of rows of {rows.shape[1]} columns by "
                    f"a matrix of {table.shape[1]} rows")
        out = _tagged(self.rows_product(rows, table, loop.ids.reshape(-1)),
                      "rows", loop)
        if bias is None:
            return out
        return self._rows(torch.add, "add", (out, bias), {}, loop)

    def _rows(self, func, name, args, kwargs, loop):
        """An element-wise operation, a per-row view or reduction of the
        pairs' rows (a per-expert table at the loop variable read at each
        pair's expert)."""
        first = next(t for t in _tensors((args, kwargs))
                     if _tag(t) is not None and _tag(t).kind == "rows")
        rank = first.dim()
        if name in _ROW_REDUCTIONS:
            dim = _dim_arg(args, kwargs, 1)
            dims = (dim,) if isinstance(dim, int) else dim
            if dims is None or any(d % rank == 0 for d in dims):
                _refuse(loop, f"{name} across the rows of the loop's "
                        "token-expert pairs")
        elif name in _ROW_VIEWS:
            dim = _dim_arg(args, kwargs, 1 if name in ("unsqueeze",
                                                      "squeeze") else 2)
            if name in ("chunk", "split", "unsqueeze", "squeeze",
                        "unflatten") and isinstance(dim, int) and \
                    dim % (rank + (name == "unsqueeze")) == 0 or \
                    name == "squeeze" and dim is None:
                _refuse(loop, f"{name} of the pairs' rows across the rows")
        elif name == "__getitem__":
            entries = _entries(args[1])
            if entries and entries[0] is Ellipsis and \
                    len([e for e in entries if e not in (None, Ellipsis)]) \
                    >= rank or entries and entries[0] not in (
                        slice(None), Ellipsis):
                _refuse(loop, "an indexing of the pairs' rows that does "
                        "not take every row")
        elif name not in _ELEMENTWISE and name not in (
                "layer_norm", "rms_norm", "gelu", "silu", "relu"):
            _refuse(loop, f"{name} of the rows of the loop's token-expert "
                    "pairs")
        else:
            args, kwargs = self._lookups((args, kwargs), rank, loop)
        result = func(*args, **kwargs)
        outs = list(_tensors(result))
        if any(o.dim() == 0 or o.shape[0] != loop.pairs for o in outs):
            _refuse(loop, f"{name} of the pairs' rows across the rows")
        if name in _ELEMENTWISE and outs:
            # The pairs' rows stay at dimension 0 of the result; any other
            # operand broadcasts along them.
            for t in _tensors((args, kwargs)):
                mine = _tag(t) is not None and _tag(t).kind == "rows"
                if mine and t.dim() != outs[0].dim() or not mine and (
                        t.dim() > outs[0].dim() or t.dim() == outs[0].dim()
                        and t.shape[0] != 1):
                    _refuse(loop, f"{name} of the pairs' rows with a value "
                            "of other rows")
        for o in outs:
            _tagged(o, "rows", loop)
        return result

    def _lookups(self, value, rank, loop):
        """`value` with each per-expert table at the loop variable replaced
        by its row of each pair's expert ([pairs, 1..., *its shape])."""
        if isinstance(value, (list, tuple)):
            return type(value)(self._lookups(v, rank, loop) for v in value)
        if isinstance(value, dict):
            return {k: self._lookups(v, rank, loop) for k, v in value.items()}
        tag = _tag(value)
        if tag is None or tag.kind != "table":
            return value
        if value.dim() >= rank:
            _refuse(loop, "a per-expert table at the loop variable of as "
                    "many dimensions as the pairs' rows")
        rows = tag.info["table"][loop.ids.reshape(-1)]
        if tag.info["t"]:
            rows = rows.transpose(-1, -2)
        return _tagged(rows.reshape(loop.pairs,
                                    *[1] * (rank - 1 - value.dim()),
                                    *value.shape), "rows", loop)
