"""The positions an attention mask excludes whatever the batch holds.

A causal language model of transformers builds its attention mask inside
the forward, from the batch's padding mask and index comparisons
(masking_utils: `kv_idx <= q_idx`, the padding looked up per key, combined
with `&`, then `where(mask, 0, -inf)` for an additive mask), and passes it
to scaled_dot_product_attention with is_causal=False. When the fused pair
is decomposed (_attention), the mask is a traced tensor whose values are
the example batch's: which of its positions are masked for *every* batch
is a property of the graph that made it, not of those values.

This module reads that property by partial evaluation of the graph: each
node's value is a tensor and a `known` tensor of the same shape, true where
the value holds for every input of the step. The step's inputs
(placeholders) are known nowhere; a node none of whose ancestors is an
input or a random op (torch.Tag.nondeterministic_seeded) is computed as it
is (arange, full, scalar_tensor, constants). Through the other nodes
knowledge flows by what the ops declare:

- element-wise ops (torch.Tag.pointwise): known where all operands are,
  and also where an operand decides the result alone: `a & b` is known
  false where either is known false, `a | b` known true where either is
  known true, `where(c, x, y)` known where c is known and the branch it
  takes is, or where x and y are known and equal;
- views (the schema's first argument aliases the result) and copies to
  another type, `cat`, and `index` with known indices: each result element
  is one operand element, so its knowledge moves with it;
- anything else (a product, a reduction, an op on an unknown index) is
  known nowhere.

A mask whose knowledge cannot be read (an op fails on the placeholder
values, a node without a recorded shape) gives no excluded positions: the
attention is then computed whole, which is always exact.
"""

import contextlib

import torch

aten = torch.ops.aten

_AND = {aten.bitwise_and.Tensor, aten.logical_and.default}
_OR = {aten.bitwise_or.Tensor, aten.logical_or.default}
_SAME_POSITION = {aten._to_copy.default, aten.clone.default,
                  aten.alias.default, aten.lift_fresh_copy.default}


class _GiveUp(Exception):
    """The graph holds something this evaluation does not read."""


def _tags(target):
    return getattr(target, "tags", ())


def _is_view(target):
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.arguments:
        return False
    alias = schema.arguments[0].alias_info
    return (alias is not None and not alias.is_write) or \
        torch.Tag.view_copy in _tags(target)


def _is_random(target):
    return torch.Tag.nondeterministic_seeded in _tags(target)


class _Evaluation:
    """The partial values of a graph's nodes, each computed once."""

    def __init__(self, root):
        self.root = root
        self.constant = {}
        self.partial = {}

    # --------------------------------------------------------- constants
    def is_constant(self, node):
        """No input and no random op among node and its ancestors."""
        stack = [node]
        while stack:
            n = stack[-1]
            if n in self.constant:
                stack.pop()
                continue
            pending = [a for a in n.all_input_nodes if a not in self.constant]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self.constant[n] = (
                n.op in ("call_function", "get_attr") and
                not (n.op == "call_function" and _is_random(n.target)) and
                all(self.constant[a] for a in n.all_input_nodes))
        return self.constant[node]

    # ------------------------------------------------------------ values
    def of(self, node):
        """(value, known) of node."""
        if node not in self.partial:
            self.partial[node] = self._evaluate(node)
        return self.partial[node]

    def _unknown(self, node):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise _GiveUp()
        shape = tuple(val.shape)
        return (torch.zeros(shape, dtype=val.dtype),
                torch.zeros(shape, dtype=torch.bool))

    def _evaluate(self, node):
        if node.op == "get_attr":
            value = getattr(self.root, node.target, None)
            if not isinstance(value, torch.Tensor):
                raise _GiveUp()
            value = value.detach()
            return value, torch.ones(value.shape, dtype=torch.bool)
        if node.op != "call_function":
            return self._unknown(node)
        target = node.target
        if self.is_constant(node):
            value = self._call(node, lambda n: self.of(n)[0])
            if not isinstance(value, torch.Tensor):
                raise _GiveUp()
            return value, torch.ones(value.shape, dtype=torch.bool)
        if target is aten.index.Tensor:
            return self._index(node)
        if target is aten.cat.default:
            return self._cat(node)
        if _is_view(target) or target in _SAME_POSITION:
            return self._moved(node)
        if torch.Tag.pointwise in _tags(target) and not _is_random(target):
            return self._pointwise(node)
        return self._unknown(node)

    def _call(self, node, value_of):
        """node's op on its operands' values (value_of(n) for a node n)."""
        def sub(a):
            if isinstance(a, torch.fx.Node):
                return value_of(a)
            if isinstance(a, (list, tuple)):
                return type(a)(sub(x) for x in a)
            return a
        args = sub(tuple(node.args))
        kwargs = {k: sub(v) for k, v in node.kwargs.items()}
        try:
            return node.target(*args, **kwargs)
        except Exception:  # an op on placeholder values it cannot take
            raise _GiveUp() from None

    def _moved(self, node):
        """A view or a copy: each element one of the first operand's."""
        source = node.args[0]
        if not isinstance(source, torch.fx.Node) or any(
                not self.is_constant(a) for a in node.all_input_nodes
                if a is not source):
            return self._unknown(node)
        value = self._call(node, lambda n: self.of(n)[0])
        if node.target in _SAME_POSITION:
            return value, self.of(source)[1].clone()
        known = self._call(node, lambda n: self.of(n)[1] if n is source
                           else self.of(n)[0])
        return value, known

    def _index(self, node):
        source, indices = node.args[0], node.args[1]
        if not isinstance(source, torch.fx.Node) or not all(
                i is None or self.is_constant(i) for i in indices):
            return self._unknown(node)
        value = self._call(node, lambda n: self.of(n)[0])
        known = self._call(node, lambda n: self.of(n)[1] if n is source
                           else self.of(n)[0])
        return value, known

    def _cat(self, node):
        value = self._call(node, lambda n: self.of(n)[0])
        known = self._call(node, lambda n: self.of(n)[1])
        return value, known

    def _pointwise(self, node):
        value = self._call(node, lambda n: self.of(n)[0])
        if not isinstance(value, torch.Tensor):
            raise _GiveUp()
        operands = [self.of(a) for a in node.args
                    if isinstance(a, torch.fx.Node)]
        known = torch.ones(value.shape, dtype=torch.bool)
        for _, k in operands:
            known = known & k
        target = node.target
        if value.dtype == torch.bool and target in _AND | _OR:
            decides = [k & (v.bool() if target in _OR else ~v.bool())
                       for v, k in operands]
            for d in decides:
                known = known | d
        elif target is aten.where.self and len(operands) == 3:
            (c, ck), (x, xk), (y, yk) = operands
            branch = ck & torch.where(c.bool(), xk, yk)
            same = xk & yk & (x == y)
            known = known | branch | same
        return value, known.expand(value.shape).clone()


@contextlib.contextmanager
def untraced():
    """Tensor ops that the trace under way (make_fx, functionalize) does
    not record: this module's own computations on the graph's values."""
    from torch.fx.experimental import proxy_tensor
    with proxy_tensor.disable_proxy_modes_tracing(), \
            torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(
                torch._C.DispatchKey.Functionalize)):
        yield


def _traced_node(tensor):
    """The graph node of tensor in the trace under way and its tracer, or
    (None, None)."""
    from torch.fx.experimental import proxy_tensor
    mode = proxy_tensor.get_proxy_mode()
    if mode is None:
        return None, None
    proxy = proxy_tensor.get_proxy_slot(tensor, mode.tracer, None,
                                        lambda p: p.proxy)
    if proxy is None:
        return None, None
    return proxy.node, mode.tracer


def _eager(tensor):
    """tensor's values are the ones it is computed with: no trace, no
    dispatch mode, no functorch transform, not a fake or wrapped tensor."""
    from torch._subclasses.fake_tensor import is_fake
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    return (type(tensor) is torch.Tensor and not is_fake(tensor) and
            _get_current_dispatch_mode() is None and
            torch._C._functorch.peek_interpreter_stack() is None)


def _mask_partial(mask):
    """(value, known) of an attention mask: under make_fx, by partial
    evaluation of the graph that made it; eagerly, its values, known
    everywhere; in any other trace or mode, None (nothing known)."""
    node, tracer = _traced_node(mask)
    if node is not None:
        # One evaluation per trace: every layer's forward and backward read
        # the same mask.
        if not hasattr(tracer, "_ga_known_masks"):
            tracer._ga_known_masks = {}
        memo = tracer._ga_known_masks
        if node not in memo:
            with untraced():
                try:
                    memo[node] = _Evaluation(tracer.root).of(node)
                except (_GiveUp, RecursionError):
                    memo[node] = None
        return memo[node]
    if _eager(mask):
        value = mask.detach()
        return value, torch.ones(value.shape, dtype=torch.bool)
    return None


def excluded_positions(attn_mask, is_causal, tq, tk):
    """[tq, tk] bool: the (query, key) pairs that the mask excludes for
    every batch element and head, whatever the step's inputs (a boolean
    mask known false, an additive one known -inf; is_causal's keys after
    the query); None when nothing is known. The result is not traced."""
    partial = None if attn_mask is None else _mask_partial(attn_mask)
    with untraced():
        return _excluded(partial, is_causal, tq, tk)


def causal_excluded(rows, keys, device=None):
    """[rows, keys] bool: is_causal's excluded pairs (a key after the
    query, aligned at the top left as PyTorch's SDPA) for the queries and
    keys of the (start, end) spans rows and keys."""
    query = torch.arange(rows[0], rows[1], device=device)
    key = torch.arange(keys[0], keys[1], device=device)
    return key[None, :] > query[:, None]


def _excluded(partial, is_causal, tq, tk):
    excluded = None
    if is_causal:
        excluded = causal_excluded((0, tq), (0, tk))
    if partial is not None:
        value, known = partial
        out = known & (~value.bool() if value.dtype == torch.bool
                       else value == float("-inf"))
        while out.dim() < 2:
            out = out.unsqueeze(0)
        out = out.reshape(-1, *out.shape[-2:]).all(0).expand(tq, tk)
        excluded = out if excluded is None else excluded | out
    return excluded
