"""The permutation rule of mixture-of-experts layers, applied as the step is
traced.

transformers' experts sort the token-expert pairs of the whole batch by
expert (`expert_ids_g, perm = torch.sort(expert_ids)`), gather the rows by
the permutation (`hidden_states[perm // k]`, `weights[perm]`), multiply
each expert's group of rows by its weights (a grouped product whose group
ends count the sorted ids: `cumsum(histc(expert_ids_g))`), weight the rows
element-wise and undo the permutation (`out[inv_perm]`, `inv_perm[perm] =
arange`) before the sum over each token's experts. The sort is across the
batch: a micro-batch's pairs are not rows [a, a + m) of the sorted pairs.

The rule: a permutation of the rows (the indices of a sort of a 1-d
tensor) gives values that are "sorted": gathers by it, element-wise
operations among values sorted by the same permutation (with values that
do not span the rows), views that keep the rows, and grouped products
whose group ends count the sorted ids keep that state; the inverse
permutation brings back values in the original order. Every such value is
a function of its own row alone, so the permutation can be left out: the
trace computes each of them in the original order (the permutation is the
identity, a gather by it a view, a gather by `perm // k` each token
repeated k times, and the grouped product takes the group of each row,
ga_mlir::grouped_mm_rows, instead of sorted rows and ends), and the
inverse is a view again. The values are the same; only the order of the
weights' gradient sums differs (rounding). Each micro-batch's rows are
then its own samples' pairs with their own groups: the split is exact and
the trace does not depend on the example batch's routing.

Any other use of a sorted value or of the permutation (a reduction or scan
across the sorted rows, an element-wise operation with a value in the
original order, two permutations mixed, the permutation read as data) is
refused at its line: it would depend on the order of the pairs of the
whole batch.
"""

import torch

from ._common import CompileError
from ._locations import current_user_line

# The attribute that carries a traced tensor's part in the rule.
_TAG = "_ga_permutation"

# Element-wise functions and methods (by name) that keep the sorted state of
# operands sorted by one permutation.
_ELEMENTWISE = frozenset("""
    __mul__ __rmul__ mul __add__ __radd__ add __sub__ __rsub__ sub
    __truediv__ __rtruediv__ div true_divide __neg__ neg __pow__ pow square
    sqrt rsqrt exp log silu sigmoid tanh relu gelu softplus abs clamp
    float double half bfloat16 int long to type_as contiguous where
    masked_fill mul_ add_ div_ maximum minimum
    """.split())

# Element-wise conversions (of the sorted ids: still the ids).
_CONVERSIONS = frozenset("float double int long to".split())

# Functions that read a tensor's metadata, not its values.
_METADATA = frozenset("""
    size dim __get__ numel is_floating_point element_size stride __len__
    is_contiguous get_device __format__ __repr__
    """.split())


class _Tag:
    """What a traced tensor is for the rule: `kind` one of perm (the
    permutation, traced as arange), token (perm // k), sorted (a value in
    the permutation's order, traced in the original order), counts (a
    histc of sorted ids), ends (their cumsum), empty (empty_like(perm)),
    inverse (the inverse permutation), arange."""

    def __init__(self, kind, sort=None, **info):
        self.kind, self.sort, self.info = kind, sort, info


class _Sort:
    """One sort: its line, its keys (in the original order) and rows."""

    def __init__(self, keys, line):
        self.keys, self.line, self.rows = keys, line, keys.shape[0]


def _tag(t):
    return getattr(t, _TAG, None) if isinstance(t, torch.Tensor) else None


def _tagged(t, kind, sort=None, **info):
    setattr(t, _TAG, _Tag(kind, sort, **info))
    return t


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def refuse(what, origin, reason):
    """CompileError at the user's line: `what`, where the rule's value came
    from (`origin`, or ""), and why the rule cannot take it (`reason`)."""
    raise CompileError(
        f"{current_user_line()}: error: {what}{origin}: {reason}",
        code="moe-routing")


def _refuse(sort, what):
    refuse(what, f" (sorted at {sort.line})" if sort is not None else "",
           "a sort across the "
           "batch (the token-expert pairs sorted by expert) is compiled only "
           "when its permutation is undone before anything reads across the "
           "sorted rows (gathers by it, element-wise operations among values "
           "in its order, grouped products whose ends count its rows, then "
           "the inverse permutation); this use would depend on the order of "
           "the pairs of the whole batch, which a micro-batch cannot see")


def _entries(index):
    """The entries of a __getitem__ index, as a list."""
    return list(index) if isinstance(index, tuple) else [index]


def _name(func):
    return getattr(func, "__name__", str(func))


class Permutations:
    """The rule as a handler of the torch functions of a trace (called by
    _moe.ExpertProducts before it runs a function): `handle(func, args,
    kwargs)` returns NotImplemented when the rule has nothing to do with
    the call, else its result."""

    def handle(self, func, args, kwargs):
        # An arange is a plain value (tagged only for the inverse's write).
        tags = [(t, _tag(t)) for t in _tensors((args, kwargs))]
        tags = [(t, tag) for t, tag in tags
                if tag is not None and tag.kind != "arange"]
        name = _name(func)
        if name in ("sort", "argsort") and not tags:
            return self._sort(func, name, args, kwargs)
        if name == "arange" and not tags:
            return _tagged(func(*args, **kwargs), "arange")
        if not tags:
            return NotImplemented
        return self._use(func, name, args, kwargs, tags)

    def _sort(self, func, name, args, kwargs):
        keys = args[0]
        dim = kwargs.get("dim", args[1] if len(args) > 1 and
                         isinstance(args[1], int) else -1)
        if not isinstance(keys, torch.Tensor) or keys.dim() != 1 or \
                dim not in (0, -1) or keys.dtype.is_floating_point:
            return NotImplemented
        sort = _Sort(keys, current_user_line())
        perm = _tagged(torch.arange(sort.rows, device=keys.device), "perm",
                       sort)
        if name == "argsort":
            return perm
        values = _tagged(keys.clone(), "sorted", sort, keys=True)
        return torch.return_types.sort((values, perm))

    def _use(self, func, name, args, kwargs, tags):
        sorts = {id(tag.sort): tag.sort for _, tag in tags if tag.sort}
        sort = next(iter(sorts.values()), None)
        if len(sorts) > 1:
            _refuse(sort, f"{name} mixes the orders of two sorts")
        kinds = [tag.kind for _, tag in tags]
        if name in _METADATA:
            # What a tensor is (device, dtype, shape), never its values in
            # the sorted order: a property that returns a tensor (`.T`,
            # `.data`) would carry them out of the rule untagged.
            result = func(*args, **kwargs)
            if next(_tensors(result), None) is not None:
                _refuse(sort, f"the permutation or a value sorted by it "
                        f"reaches {name} (a tensor view)")
            return result
        if name in ("__getitem__", "index_select"):
            return self._gather(name, args, tags[0][1], sort)
        if name == "__setitem__":
            return self._inverse(args, kinds, sort)
        # perm // k, or perm.div(k, rounding_mode="trunc") (JetMoE): the
        # same for the permutation's non-negative entries.
        divisor = args[1] if len(args) > 1 else None
        if kinds == ["perm"] and isinstance(divisor, int) and (
                name in ("__floordiv__", "floor_divide") or
                name == "div" and kwargs.get("rounding_mode") in
                ("trunc", "floor")):
            return _tagged(torch.arange(sort.rows), "token", sort, k=divisor)
        if kinds == ["perm"] and name == "empty_like":
            return _tagged(func(*args, **kwargs), "empty", sort)
        if kinds == ["perm"] and name == "argsort":
            return _tagged(torch.arange(sort.rows), "inverse", sort)
        if kinds == ["sorted"] and name == "histc" and \
                tags[0][1].info.get("keys"):
            return self._histc(func, args, kwargs, sort)
        if kinds == ["counts"] and name == "cumsum":
            counts = tags[0][1]
            return _tagged(func(*args, **kwargs), "ends", sort,
                           bins=counts.info["bins"])
        if set(kinds) <= {"counts", "ends"}:
            # Counts of the sorted ids are counts of the ids: plain values.
            return func(*args, **kwargs)
        if set(kinds) == {"sorted"}:
            return self._sorted(func, name, args, kwargs, sort)
        return _refuse(sort, f"the permutation or a value sorted by it "
                       f"reaches {name}")

    def _gather(self, name, args, index, sort):
        if name == "index_select":
            x, dim, index_t = args[0], args[1], args[2]
            if dim != 0:
                _refuse(sort, "a gather by a permutation along another "
                        "dimension than the rows")
            index = _tag(index_t)
        else:
            x, index_t = args
            index = _tag(index_t) if isinstance(index_t, torch.Tensor) \
                else None
        source = _tag(x)
        if source is not None and source.kind == "sorted" and \
                name == "__getitem__" and not any(
                    isinstance(i, torch.Tensor) for i in _entries(index_t)):
            return self._basic_index(x, index_t, sort)
        if source is None and index is not None and index.kind == "sorted":
            return self._lookup(name, args, index_t, sort)
        if source is None and (index is None or index.kind not in
                               ("perm", "token", "inverse")):
            return NotImplemented
        if index is None or source is not None and index.kind != "inverse":
            _refuse(sort, "a value sorted by a permutation indexed")
        if index.kind == "perm" and x.shape[0] == sort.rows:
            return _tagged(x.view(x.shape), "sorted", sort)
        if index.kind == "token" and x.shape[0] * index.info["k"] == \
                sort.rows:
            k = index.info["k"]
            rows = x.unsqueeze(1).expand(x.shape[0], k, *x.shape[1:])
            return _tagged(rows.reshape(sort.rows, *x.shape[1:]), "sorted",
                           sort)
        if index.kind == "inverse" and source is not None and \
                source.kind == "sorted":
            return x.view(x.shape)
        return _refuse(sort, "a gather by a permutation other than of the "
                       "sorted rows (x[perm], x[perm // k], or the inverse "
                       "of sorted values)")

    def _basic_index(self, x, index, sort):
        """Basic indexing of sorted values (slices, integers, an ellipsis:
        gpt-oss' `gate_up[..., ::2]`) that takes every row: a view of each
        row alone, sorted as `x` is."""
        entries = _entries(index)
        if any(i is None or isinstance(i, bool) for i in entries):
            _refuse(sort, "an indexing of sorted values that adds a "
                    "dimension")
        explicit = [i for i in entries if i is not Ellipsis]
        ellipsis = len(explicit) < len(entries)
        first = None
        if entries and not (entries[0] is Ellipsis and
                            x.dim() > len(explicit)):
            first = explicit[0] if explicit else None
        if first is not None and first != slice(None):
            _refuse(sort, "an indexing of sorted values that does not take "
                    "every row")
        if not ellipsis and len(explicit) > x.dim():
            return NotImplemented
        return _tagged(x[index], "sorted", sort)

    def _lookup(self, name, args, index_t, sort):
        """A table looked up by sorted values (gpt-oss' expert biases,
        `bias[expert_ids_g]`): row i of the result is a function of row i of
        the index alone, so it is sorted as the index is. The trace looks
        the table up by the index in the original order; whether the table
        may be read by data at all (a parameter may, a value of other
        samples may not) is the batch analysis' to decide, as for any
        gather."""
        if index_t.dim() != 1 or index_t.shape[0] != sort.rows or \
                index_t.dtype.is_floating_point:
            _refuse(sort, "a lookup by sorted values other than by one "
                    "integer per sorted row")
        x = args[0]
        result = x.index_select(0, index_t) if name == "index_select" \
            else x[index_t]
        return _tagged(result, "sorted", sort)

    def _inverse(self, args, kinds, sort):
        target, index, value = args
        if _tag(target) is None or _tag(target).kind != "empty" or \
                _tag(index) is None or _tag(index).kind != "perm" or \
                _tag(value) is None or _tag(value).kind != "arange" or \
                value.shape != (sort.rows,):
            _refuse(sort, "a write by a permutation other than the inverse "
                    "(inv[perm] = arange(n) into empty_like(perm))")
        _tagged(target, "inverse", sort)
        return None

    def _histc(self, func, args, kwargs, sort):
        names = ("bins", "min", "max")
        given = dict(zip(names, args[1:]), **kwargs)
        bins = given.get("bins", 100)
        if given.get("min", 0) != 0 or given.get("max", 0) != bins - 1:
            _refuse(sort, "a histogram of sorted ids other than one bin per "
                    "id (bins=E, min=0, max=E - 1)")
        return _tagged(func(*args, **kwargs), "counts", sort, bins=bins)

    def _sorted(self, func, name, args, kwargs, sort):
        """An element-wise operation or a view of sorted values."""
        first = next(t for t in _tensors((args, kwargs))
                     if _tag(t) and _tag(t).kind == "sorted")
        if name in ("unsqueeze", "chunk", "split", "view", "reshape"):
            result = func(*args, **kwargs)
            outs = list(_tensors(result))
            if any(o.dim() == 0 or o.shape[0] != sort.rows for o in outs) or \
                    (name in ("chunk", "split") and
                     kwargs.get("dim", args[2] if len(args) > 2 else 0)
                     % first.dim() == 0) or \
                    (name == "unsqueeze" and args[1] % (first.dim() + 1) == 0):
                _refuse(sort, f"{name} of sorted rows across the rows")
            for o in outs:
                _tagged(o, "sorted", sort)
            return result
        if name not in _ELEMENTWISE:
            _refuse(sort, f"{name} of values sorted by a permutation")
        result = func(*args, **kwargs)
        outs = list(_tensors(result))
        rank = outs[0].dim() if outs else 0
        for t in _tensors((args, kwargs)):
            # Sorted operands keep the rows at dimension 0 of the result;
            # any other operand broadcasts along them.
            plain = _tag(t) is None or _tag(t).kind == "arange"
            if plain and t.dim() == rank and t.shape[0] != 1 or \
                    not plain and t.dim() != rank:
                _refuse(sort, f"{name} of a value sorted by a permutation "
                        "with one in the original order")
        # Conversions of the sorted ids are still the ids (for histc).
        keys = name in _CONVERSIONS and _tag(first).info.get("keys")
        for o in outs:
            _tagged(o, "sorted", sort, keys=keys)
        return result


def sorted_product(input, weight, offs):
    """For the grouped product of _moe: the group ids of its rows when
    `input` holds sorted rows and `offs` the ends counted from the same
    sort (None when neither is sorted); refused when only one of them is,
    or when the histogram's bins are not the groups."""
    rows, ends = _tag(input), _tag(offs)
    if rows is None and ends is None:
        return None
    sort = (rows or ends).sort
    if rows is None or ends is None or rows.kind != "sorted" or \
            ends.kind != "ends" or rows.sort is not ends.sort or \
            ends.info["bins"] != weight.shape[0]:
        _refuse(sort, "a grouped product of sorted rows whose group ends "
                "are not the counts of the sorted ids (or of rows in the "
                "original order by such ends)")
    return sort.keys


def mark_sorted(t, input):
    """Tags the grouped product's result `t` sorted as its input is."""
    return _tagged(t, "sorted", _tag(input).sort)
