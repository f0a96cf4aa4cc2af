"""Random training steps for the ga-accumulate differential fuzzer.

A step is a func.func whose per-sample arguments carry ``ga.batch``: a forward
pass over the per-sample values (named and generic linalg ops with random
indexing maps, reshapes, scf.if/scf.for, captured tensors read with
tensor.extract), a loss reduced over the batch, gradients (reductions over the
batch of per-sample terms, shaped like the parameters) and an optimizer update.
The steps need not be the gradient of anything: what matters is the dependence
structure of real steps. Each generator feature has its own probability and is
recorded in ``Step.features``; features that make a step batch-coupled (and so
must be refused or, if accepted, show as a mismatch) are in ``COUPLING``.

Every tensor dimension carries a *label*: loop dimensions of a generic op are
the union of its operands' labels, so transposes, broadcasts and reductions come
from the labels alone. The batch label is ``b`` (or ``bt`` once a ``[B, T]``
pair is collapsed, samples staying contiguous).
"""

import functools
import random
import re

# Features whose steps couple samples: a refusal is the expected answer.
COUPLING = {"batchnorm", "sample_slice", "capture_other_sample", "diag_batch",
            "compound_batch", "batch_position", "argmax_batch_inner", "reduce_in_for",
            "if_on_sample", "ordered_inner", "capture_stat_param",
            "pad_other_sample",
            # a reduction over the batch in an scf.if whose condition
            # compares the loss (micro-batches could take other branches)
            "guarded_on_loss",
            # an accumulation chain whose init is read per sample and depends
            # on parameters: coupled (exact with recompute-statistics)
            "chain_init_coupled",
            # not coupling, but refused by design ("collapsing the batch
            # dimension into an outer dimension interleaves samples")
            "reshape_interleaved"}

# Probability of each optional feature.
PROBS = {
    "dyn_batch": 0.3,          # ? instead of a static batch size
    "batch_dim1": 0.35,        # x: [F, B] with ga.batch = 1
    "rank3_input": 0.3,        # a second per-sample input [B, T, D]
    "reshape": 0.35,           # collapse [B, T, D] -> [B*T, D], expand [B, F] -> [B, P, Q]
    "transposed_matmul": 0.4,  # linalg.matmul with transposing indexing_maps
    "named_ops": 0.5,          # linalg.transpose/broadcast/reduce/add/mul
    "per_sample_reduce": 0.4,  # reductions over non-batch dims only
    "broadcast_param": 0.3,    # a parameter broadcast to [B, H], then used per sample
    "compound_expr": 0.3,      # d floordiv 2 / d mod k on non-batch dims
    "gather": 0.35,            # tensor.extract %logits[linalg.index 0, label] (torch-mlir CE)
    "capture_same_sample": 0.2,  # tensor.extract %h[linalg.index 0, const] of a captured per-sample tensor
    "capture_param": 0.25,     # tensor.extract of a parameter at a computed index
    "scf_if": 0.25,            # per-sample values through an scf.if
    "scf_for": 0.25,           # stacked layers in an scf.for
    "loop_chain": 0.2,         # scf.for whose iter_args rotate (batchness arrives after k iterations)
    "dim_in_region": 0.25,     # tensor.dim of the batch inside scf.if/scf.for
    "no_ps_operand": 0.2,      # ops with no per-sample operand producing batch-shaped tensors
    "tensor_arith": 0.2,       # arith/math directly on tensors
    "slice_features": 0.2,     # extract_slice / concat / insert_slice along non-batch dims
    "softmax": 0.1,            # linalg.softmax over a non-batch dim (decomposed by the lowering)
    "data_stat": 0.15,         # a data-only batch statistic (mean of an input) in per-sample math
    "capture_stat": 0.1,       # a batch statistic read with tensor.extract in a per-sample payload
    "capture_stat_param": 0.05,  # the same of a parameter-dependent value (coupled)
    "outs_carry": 0.15,        # a per-sample value as the outs operand read by the payload
    "if_mixed": 0.15,          # scf.if whose else branch yields a broadcast parameter
    "reduce_in_for": 0.04,     # a reduction over the batch inside an scf.for (refusal expected)
    "if_on_sample": 0.04,      # scf.if on a value read from sample 0 (coupled)
    # ga-accumulate options
    "opt_fuse0": 0.1,          # fuse=0
    "opt_dyn_micro": 0.1,      # dynamic-micro-batches=true (N as a trailing index argument)
    "opt_batch_args": 0.1,     # batch-args=... instead of ga.batch attributes
    "opt_recompute": 0.5,      # recompute-statistics=true when a BatchNorm is generated: exact
    "batch_dim_in_opt": 0.15,  # the batch size as a number in the optimizer (after the loop)
    "multi_result": 0.3,       # one generic, two reductions over the batch (add + max)
    "int_metric": 0.35,        # argmax per sample, correct-count as an integer sum over the batch
    "max_reduce": 0.25,        # max over the batch of the per-sample loss
    "argmax_batch": 0.2,       # (max, index) over the batch with selects
    "count_in_grad": 0.3,      # data-only count (mask sum) used in per-sample gradient terms
    "count_shared_multi": 0.2,  # the count shares a multi-result reduction with parameter-dependent sums
    "accum_chain": 0.2,        # a gradient reduction whose init is another reduction
    "init_nonzero": 0.2,       # a reduction initialised with a parameter instead of 0
    "per_sample_result": 0.2,  # a per-sample value returned
    "clip_if": 0.2,            # gradient clipping with scf.if on a reduced norm
    "int_batch_reduce": 0.15,  # maxsi over the batch of integer labels
    "ordered_reduce": 0.15,    # acc = 0.9 acc + x over the batch (order-dependent)
    "bool_mask": 0.15,         # an i1 per-sample argument in a select
    # Drawn after every feature above (older cases keep their random stream):
    "named_contract": 0.25,    # linalg.dot/vecmat/matvec/batch_matmul/batch_reduce_matmul, batch reduced
    "more_combiners": 0.25,    # min/minnum/maxnum/product over the batch, integer minsi/ori
    "reshape_interleaved": 0.3,  # collapse [T, B, D] -> [T*B, D] (samples interleaved), then per row
    "f64": 0.1,                # the whole step in float64 (every f32 of the text)
    # Coupled (must be refused):
    "batchnorm": 0.06,
    "sample_slice": 0.04,
    "capture_other_sample": 0.05,
    "diag_batch": 0.04,
    "compound_batch": 0.04,
    "batch_position": 0.04,    # float(linalg.index of the batch dim) in per-sample math
    # Drawn after every feature above (issue #20's shapes):
    "uniform_maps": 0.25,      # a batch-shaped parameter table read through floordiv / B-1-i / (i, i)
    "stack_batch": 0.25,       # torch.stack of per-sample values: concat along the batch, expand [2, B]
    "chain_init_input": 0.15,  # an accumulation chain whose init is also read per sample
    "pad_other_sample": 0.04,  # tensor.pad whose region reads sample 0 (refusal expected)
    "guarded_reduction": 0.2,  # reductions over the batch inside scf.if on lr > 0.5 (or, coupled, on the loss)
    "pad_at_sample": 0.1,      # tensor.pad whose region reads its own index along the batch (exact)
}

# Forward features, each used at least once when drawn.
FORWARD = ["reshape", "named_ops", "per_sample_reduce", "compound_expr", "capture_same_sample",
           "capture_param", "scf_if", "scf_for", "loop_chain", "no_ps_operand", "tensor_arith",
           "slice_features", "softmax", "data_stat", "if_mixed", "reduce_in_for", "if_on_sample",
           "capture_stat", "capture_stat_param", "outs_carry"]

F32_EPS = 2.0 ** -24


class V:
    """A tensor value: SSA name, dimension labels, element type."""

    def __init__(self, name, dims, et="f32", batched=False):
        self.name = name
        self.dims = list(dims)
        self.et = et
        self.batched = batched

    def __repr__(self):
        return "V(%s, %s)" % (self.name, self.dims)


class Step:
    def __init__(self):
        self.text = ""
        self.features = set()
        self.micro_batches = 1
        self.batch = 0
        self.dynamic = False
        self.red_len = 1      # longest product of reduction lengths along a chain
        self.pass_options = ""  # more ga-accumulate options (space-separated)
        self.args = []        # (name, type, attributes)
        self.body = []        # lines of the function body
        self.results = []     # (name, type)

    def render(self):
        args = ",\n    ".join("%s: %s%s" % (n, t, " {%s}" % a if a else "") for n, t, a in self.args)
        rtys = ", ".join(t for _, t in self.results)
        out = ["// generated by tools/ga-fuzz",
               "func.func @train_step(%s)\n    -> (%s) {" % (args, rtys)]
        out += self.body
        out.append("  return %s : %s" % (", ".join(n for n, _ in self.results), rtys))
        out.append("}")
        self.text = "\n".join(out) + "\n"
        return self.text


class Gen:
    def __init__(self, rng, force=None, disable=None):
        self.rng = rng
        self.force = set(force or ())
        self.disable = set(disable or ())
        self.n = 0
        self.args = []        # (name, type, attrs)
        self.consts = {}      # text -> name
        self.pro = []
        self.lines = []
        self.indent = 1
        self.size = {}        # label -> int (None for the dynamic batch)
        self.step = Step()
        self.maps = {}

    # ---------------------------------------------------------------- helpers
    def on(self, feat):
        r = self.rng.random()  # drawn either way: disabling a feature keeps the stream
        if feat in self.disable:
            return False
        if feat in self.force or r < PROBS[feat]:
            self.step.features.add(feat)
            return True
        return False

    def fresh(self, hint="v"):
        self.n += 1
        return "%%%s%d" % (hint, self.n)

    def emit(self, line):
        self.lines.append("  " * self.indent + line)

    def const(self, value, ty):
        key = "%s:%s" % (value, ty)
        if key not in self.consts:
            name = "%%c%d" % len(self.consts)
            self.consts[key] = name
            self.pro.append("  %s = arith.constant %s : %s" % (name, value, ty))
        return self.consts[key]

    def cidx(self, i):
        return self.const(str(i), "index")

    def cf32(self, x):
        return self.const("%.9e" % float(x), "f32")

    def new_label(self, size, base="f"):
        name = "%s%d" % (base, len(self.size))
        self.size[name] = size
        return name

    def real_size(self, label):
        s = self.size[label]
        if s is None:
            return self.run_batch * {"bt": getattr(self, "size_t", 1),
                                     "tb": getattr(self, "size_tb", 1)}.get(label, 1)
        return s

    def dimstr(self, label):
        s = self.size[label]
        return "?" if s is None else str(s)

    def ty(self, dims, et="f32"):
        if not dims:
            return "tensor<%s>" % et
        return "tensor<%sx%s>" % ("x".join(self.dimstr(d) for d in dims), et)

    def tyv(self, v):
        return self.ty(v.dims, v.et)

    def is_batch(self, label):
        return label in ("b", "bt")

    def empty(self, dims, et="f32", like=()):
        """tensor.empty with fresh tensor.dim ops for dynamic dimensions."""
        dyn = []
        for pos, d in enumerate(dims):
            if self.size[d] is None:
                src = None
                for v in like:
                    if d in v.dims:
                        src = v
                        break
                if src is None:
                    src = self.dim_source[d]
                nm = self.fresh("d")
                self.emit("%s = tensor.dim %s, %s : %s" % (
                    nm, src.name, self.cidx(src.dims.index(d)), self.tyv(src)))
                dyn.append(nm)
        nm = self.fresh("e")
        self.emit("%s = tensor.empty(%s) : %s" % (nm, ", ".join(dyn), self.ty(dims, et)))
        return V(nm, dims, et)

    def argmax_payload(self, label):
        """Payload of an argmax over the loop `label`: (max, index) carried in
        two outputs, the first index kept on ties."""
        def pl(a):
            j = self.fresh("j")
            self.emit("%s = linalg.index %d : index" % (j, self.loop_labels.index(label)))
            ji = self.fresh("ji")
            self.emit("%s = arith.index_cast %s : index to i64" % (ji, j))
            gt = self.fresh("gt")
            self.emit("%s = arith.cmpf ogt, %s, %s : f32" % (gt, a[0], a[1]))
            m = self.fresh("m")
            self.emit("%s = arith.select %s, %s, %s : f32" % (m, gt, a[0], a[1]))
            ix = self.fresh("ix")
            self.emit("%s = arith.select %s, %s, %s : i64" % (ix, gt, ji, a[2]))
            return [m, ix]
        return pl

    def fill(self, dims, value, et="f32", like=()):
        e = self.empty(dims, et, like)
        nm = self.fresh("z")
        lit = self.cf32(value) if et == "f32" else self.const(str(int(value)), et)
        t = self.ty(dims, et)
        self.emit("%s = linalg.fill ins(%s : %s) outs(%s : %s) -> %s" % (nm, lit, et, e.name, t, t))
        return V(nm, dims, et)

    # ---------------------------------------------------------------- generic
    def generic(self, ins, outs, payload, loop_order=None, specs=None):
        """Emits a linalg.generic.

        ins/outs: lists of V; loop dims are the union of the labels, parallel if
        they appear in the first output, reduction otherwise. payload(args) gets
        the block argument names (ins then outs) and returns the yielded names.
        specs: optional {operand index: [label or (label, fmt) per dim]}: the
        dimension is indexed by fmt.format(loop dim of label) (compound
        expressions such as "{} floordiv 2"), or by another label's loop dim.
        """
        specs = dict(specs or {})
        operands = list(ins) + list(outs)
        for i, v in enumerate(operands):
            specs.setdefault(i, list(v.dims))
        labels = []
        for i in range(len(operands)):
            for d in specs[i]:
                if isinstance(d, str) and d not in labels:
                    labels.append(d)
        if loop_order is not None:
            labels = loop_order
        else:
            self.rng.shuffle(labels)
        out_labels = set(outs[0].dims)
        dn = {d: "d%d" % i for i, d in enumerate(labels)}
        dims = ", ".join(dn[d] for d in labels)
        maps = []
        for i, v in enumerate(operands):
            ex = [dn[d] if isinstance(d, str) else d[1].format(dn[d[0]]) for d in specs[i]]
            maps.append("affine_map<(%s) -> (%s)>" % (dims, ", ".join(ex)))
        iters = ", ".join('"parallel"' if d in out_labels else '"reduction"' for d in labels)
        red = 1
        for d in labels:
            if d not in out_labels:
                red *= self.real_size(d)
        self.note_reduction(red)
        res = [self.fresh("g") for _ in outs]
        ins_s = ", ".join(v.name for v in ins)
        ins_t = ", ".join(self.tyv(v) for v in ins)
        outs_s = ", ".join(v.name for v in outs)
        outs_t = ", ".join(self.tyv(v) for v in outs)
        head = "%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}" % (
            ", ".join(res), ", ".join(maps), iters)
        self.emit(head)
        self.indent += 2
        if ins:
            self.emit("ins(%s : %s) outs(%s : %s) {" % (ins_s, ins_t, outs_s, outs_t))
        else:
            self.emit("outs(%s : %s) {" % (outs_s, outs_t))
        self.indent -= 2
        args = [self.fresh("a") for _ in list(ins) + list(outs)]
        self.emit("^bb0(%s):" % ", ".join(
            "%s: %s" % (a, v.et) for a, v in zip(args, list(ins) + list(outs))))
        self.indent += 1
        self.loop_labels = labels
        ys = payload(args)
        self.emit("linalg.yield %s : %s" % (", ".join(ys), ", ".join(v.et for v in outs)))
        self.indent -= 1
        rt = ", ".join(self.tyv(v) for v in outs)
        self.emit("} -> %s" % (rt if len(outs) == 1 else "(%s)" % rt))
        return [V(r, o.dims, o.et) for r, o in zip(res, outs)]

    def op(self, opname, *operands, ty="f32"):
        nm = self.fresh("s")
        self.emit("%s = %s %s : %s" % (nm, opname, ", ".join(operands), ty))
        return nm

    def unary(self, x, kind=None):
        """A bounded scalar function of x (no NaN/Inf on any input)."""
        kind = kind or self.rng.choice(["tanh", "relu", "sq", "sin", "exptanh", "neg", "softsign"])
        if kind == "tanh":
            return self.op("math.tanh", x)
        if kind == "relu":
            return self.op("arith.maximumf", x, self.cf32(0.0))
        if kind == "sq":
            t = self.op("math.tanh", x)
            return self.op("arith.mulf", t, t)
        if kind == "sin":
            return self.op("math.sin", x)
        if kind == "exptanh":
            return self.op("math.exp", self.op("math.tanh", x))
        if kind == "neg":
            return self.op("arith.negf", x)
        a = self.op("math.absf", x)
        d = self.op("arith.addf", a, self.cf32(1.0))
        return self.op("arith.divf", x, d)

    # ---------------------------------------------------------------- args
    def arg(self, dims, et="f32", attrs=None, hint="p"):
        nm = "%%%s%d" % (hint, len(self.args))
        self.args.append((nm, self.ty(dims, et), attrs or ""))
        return V(nm, dims, et, batched=bool(attrs and "ga.batch" in attrs))

    def scalar_arg(self, attrs, hint="h"):
        nm = "%%%s%d" % (hint, len(self.args))
        self.args.append((nm, "f32", attrs))
        return nm

    def param(self, dims, init=None):
        attrs = 'ga.init = "%s"' % init if init else ""
        return self.arg(dims, "f32", attrs, "w")

    def per_sample_arg(self, dims, et="f32", extra=""):
        bd = next(i for i, d in enumerate(dims) if self.is_batch(d))
        attrs = "ga.batch = %d : i64" % bd
        if extra:
            attrs += ", " + extra
        v = self.arg(dims, et, attrs, "x")
        return v

    def small(self):
        return self.rng.choice([2, 3, 4, 5, 6, 8])

    # ---------------------------------------------------------------- forward ops
    def nonbatch(self, v):
        return [d for d in v.dims if not self.is_batch(d)]

    def batch_label(self, v):
        for d in v.dims:
            if self.is_batch(d):
                return d
        return None

    def note_reduction(self, length):
        self.step.red_len = max(self.step.red_len, length)

    def contract_param(self, v):
        """v [.., k, ..] x W[k, h] -> [.., h, ..] (named matmul when 2-D), then an activation."""
        nb = self.nonbatch(v)
        k = self.rng.choice(nb)
        h = self.new_label(self.small(), "h")
        w = self.param([k, h] if self.rng.random() < 0.5 else [h, k])
        self.params.append(w)
        out_dims = [h if d == k else d for d in v.dims]
        if self.rng.random() < 0.25:
            out_dims = out_dims[::-1] if len(out_dims) == 2 else out_dims
        self.note_reduction(self.size[k] * 4)
        init = self.fill(out_dims, 0.0, like=[v])
        if len(v.dims) == 2 and self.rng.random() < 0.6 and out_dims[0] != h or (
                len(v.dims) == 2 and out_dims == [h, self.batch_label(v)] and self.rng.random() < 0.6):
            # linalg.matmul, possibly with transposing maps: C[m, n] = A[m, kk] B[kk, n]
            m_l, n_l = out_dims
            a_op, b_op = (v, w) if m_l in v.dims else (w, v)
            if self.on("transposed_matmul") or a_op.dims != [m_l, k] or b_op.dims != [k, n_l]:
                self.step.features.add("transposed_matmul")
                pos = {m_l: "m", n_l: "n", k: "k"}
                amap = "affine_map<(m, n, k) -> (%s)>" % ", ".join(pos[d] for d in a_op.dims)
                bmap = "affine_map<(m, n, k) -> (%s)>" % ", ".join(pos[d] for d in b_op.dims)
                maps = "indexing_maps = [%s, %s, affine_map<(m, n, k) -> (m, n)>] " % (amap, bmap)
            else:
                maps = ""
            nm = self.fresh("mm")
            self.emit("%s = linalg.matmul %sins(%s, %s : %s, %s) outs(%s : %s) -> %s" % (
                nm, maps, a_op.name, b_op.name, self.tyv(a_op), self.tyv(b_op), init.name,
                self.tyv(init), self.tyv(init)))
            self.step.features.add("named_matmul")
            r = V(nm, out_dims)
        else:
            def pl(a):
                p = self.op("arith.mulf", a[0], a[1])
                return [self.op("arith.addf", a[2], p)]
            r = self.generic([v, w], [init], pl)[0]
            self.step.features.add("generic_contraction")
        return self.activation(r)

    def activation(self, v, perm=False):
        dims = list(v.dims)
        if perm:
            self.rng.shuffle(dims)
        e = self.empty(dims, like=[v])
        return self.generic([v], [e], lambda a: [self.unary(a[0])])[0]

    def bias(self, v):
        nb = self.nonbatch(v)
        sub = [d for d in nb if self.rng.random() < 0.7] or nb[:1]
        bvec = self.param(sub)
        self.params.append(bvec)
        dims = list(v.dims)
        if self.rng.random() < 0.3:
            self.rng.shuffle(dims)
            self.step.features.add("transposed_generic")
        e = self.empty(dims, like=[v])
        return self.generic([v, bvec], [e], lambda a: [self.op("arith.addf", a[0], a[1])])[0]

    def named_op(self, v):
        self.step.features.add("named_ops")
        c = self.rng.choice(["transpose", "add", "reduce_max", "broadcast_mul"])
        if c == "transpose" and len(v.dims) >= 2:
            perm = list(range(len(v.dims)))
            while perm == list(range(len(v.dims))):
                self.rng.shuffle(perm)
            dims = [v.dims[p] for p in perm]
            e = self.empty(dims, like=[v])
            nm = self.fresh("t")
            self.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) permutation = [%s]" % (
                nm, v.name, self.tyv(v), e.name, self.tyv(e), ", ".join(map(str, perm))))
            return V(nm, dims)
        if c == "add":
            other = [p for p in self.pool if p.dims == v.dims and p is not v]
            o = other[0] if other else v
            e = self.empty(v.dims, like=[v])
            nm = self.fresh("ad")
            opn = self.rng.choice(["linalg.add", "linalg.mul", "linalg.sub"])
            self.emit("%s = %s ins(%s, %s : %s, %s) outs(%s : %s) -> %s" % (
                nm, opn, v.name, o.name, self.tyv(v), self.tyv(o), e.name, self.tyv(e), self.tyv(e)))
            return self.activation(V(nm, v.dims))
        if c == "reduce_max" and len(v.dims) >= 2:
            nb = self.nonbatch(v)
            k = self.rng.choice(nb)
            dims = [d for d in v.dims if d != k]
            comb, init_v = self.rng.choice([("arith.maximumf", -3.0e38), ("arith.minimumf", 3.0e38),
                                            ("arith.addf", 0.0)])
            init = self.fill(dims, init_v, like=[v])
            nm = self.fresh("rm")
            self.emit("%s = linalg.reduce { %s } ins(%s : %s) outs(%s : %s) dimensions = [%d]" % (
                nm, comb, v.name, self.tyv(v), init.name, self.tyv(init), v.dims.index(k)))
            self.note_reduction(self.size[k] * 4)
            self.step.features.add("per_sample_reduce")
            return self.activation(V(nm, dims))
        # broadcast a parameter over the batch (and other dims), multiply
        nb = self.nonbatch(v)
        sub = [d for d in v.dims if d in nb and self.rng.random() < 0.6]
        pv = self.param(sub)
        self.params.append(pv)
        e = self.empty(v.dims, like=[v])
        added = [i for i, d in enumerate(v.dims) if d not in sub]
        bnm = self.fresh("bc")
        self.emit("%s = linalg.broadcast ins(%s : %s) outs(%s : %s) dimensions = [%s]" % (
            bnm, pv.name, self.tyv(pv), e.name, self.tyv(e), ", ".join(map(str, added))))
        self.step.features.add("broadcast_param")
        e2 = self.empty(v.dims, like=[v])
        nm = self.fresh("mu")
        self.emit("%s = linalg.mul ins(%s, %s : %s, %s) outs(%s : %s) -> %s" % (
            nm, v.name, bnm, self.tyv(v), self.tyv(e), e2.name, self.tyv(e2), self.tyv(e2)))
        return V(nm, v.dims)

    def per_sample_reduce(self, v):
        nb = self.nonbatch(v)
        k = self.rng.choice(nb)
        dims = [d for d in v.dims if d != k]
        init = self.fill(dims, 0.0, like=[v])
        self.note_reduction(self.size[k] * 4)
        r = self.generic([v], [init], lambda a: [self.op("arith.addf", a[1], self.op("math.tanh", a[0]))])[0]
        return r

    def reshape(self, v):
        """[b, t, d] -> [bt, d] (samples contiguous) or [.., f, ..] -> [.., p, q, ..]."""
        if v.dims[:1] == ["b"] and len(v.dims) == 3 and v.dims[1] == getattr(self, "t_label", None) \
                and self.rng.random() < 0.6:
            nm = self.fresh("cl")
            dims = ["bt", v.dims[2]]
            self.emit("%s = tensor.collapse_shape %s [[0, 1], [2]] : %s into %s" % (
                nm, v.name, self.tyv(v), self.ty(dims)))
            self.step.features.add("reshape")
            r = V(nm, dims)
            return r
        cands = [d for d in self.nonbatch(v) if self.size[d] in (4, 6, 8)]
        if not cands:
            return None
        f = self.rng.choice(cands)
        p = self.new_label(2, "p")
        q = self.new_label(self.size[f] // 2, "q")
        pos = v.dims.index(f)
        dims = v.dims[:pos] + [p, q] + v.dims[pos + 1:]
        groups, j = [], 0
        for i, d in enumerate(v.dims):
            if i == pos:
                groups.append([j, j + 1])
                j += 2
            else:
                groups.append([j])
                j += 1
        shape = []
        for d in dims:
            if self.size[d] is None:
                nm = self.fresh("d")
                self.emit("%s = tensor.dim %s, %s : %s" % (nm, v.name, self.cidx(v.dims.index(d)), self.tyv(v)))
                shape.append(nm)
            else:
                shape.append(str(self.size[d]))
        nm = self.fresh("ex")
        self.emit("%s = tensor.expand_shape %s [%s] output_shape [%s] : %s into %s" % (
            nm, v.name, ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups),
            ", ".join(shape), self.tyv(v), self.ty(dims)))
        self.step.features.add("reshape")
        r = V(nm, dims)
        # Collapse back now and then (keeps later ops on rank <= 3).
        if len(dims) > 3 or self.rng.random() < 0.5:
            nm2 = self.fresh("cl")
            self.emit("%s = tensor.collapse_shape %s [%s] : %s into %s" % (
                nm2, nm, ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups),
                self.ty(dims), self.tyv(v)))
            return self.activation(V(nm2, v.dims))
        return self.activation(r)

    def uncollapse(self, v):
        """[bt, d] -> [b, t, d]."""
        t = self.t_label
        d = v.dims[1]
        shape = []
        if self.size["b"] is None:
            nm = self.fresh("d")
            b0 = self.dim_source["b"]
            self.emit("%s = tensor.dim %s, %s : %s" % (nm, b0.name, self.cidx(b0.dims.index("b")), self.tyv(b0)))
            shape.append(nm)
        else:
            shape.append(str(self.size["b"]))
        shape += [str(self.size[t]), str(self.size[d])]
        dims = ["b", t, d]
        nm = self.fresh("ex")
        self.emit("%s = tensor.expand_shape %s [[0, 1], [2]] output_shape [%s] : %s into %s" % (
            nm, v.name, ", ".join(shape), self.tyv(v), self.ty(dims)))
        return V(nm, dims)

    def compound(self, v, batch=False):
        """A per-sample elementwise op reading a parameter (or, coupled, the
        input itself) through a compound index expression."""
        nb = self.nonbatch(v)
        if batch:
            bl = self.batch_label(v)
            e = self.empty(v.dims, like=[v])
            spec = [(d, "{} floordiv 2") if d == bl else d for d in v.dims]
            # The output gives the loop range of every label.
            return self.generic([v], [e], lambda a: [self.op("math.tanh", a[0])], specs={0: spec})[0]
        k = self.rng.choice(nb)
        s = self.size[k]
        if self.rng.random() < 0.5:
            psize, fmt = (s + 1) // 2, "{} floordiv 2"
        else:
            m = self.rng.choice([2, 3])
            psize, fmt = m, "{} mod %d" % m
        pl = self.new_label(psize, "c")
        pv = self.param([pl])
        self.params_nograd.append(pv)
        e = self.empty(v.dims, like=[v])
        r = self.generic([v, pv], [e], lambda a: [self.op("arith.mulf", a[0], a[1])],
                         specs={1: [(k, fmt)]})[0]
        return r

    def capture(self, v, mode):
        """out[b, ...] = f(v[b, ...], captured[...]) with tensor.extract in the payload."""
        bl = self.batch_label(v)
        e = self.empty(v.dims, like=[v])
        src = self.rng.choice([p for p in self.pool if self.batch_label(p) == bl] or [v])

        def pl(a):
            idx = []
            for d in src.dims:
                if d == bl:
                    if mode == "other":
                        idx.append(self.cidx(0))
                    else:
                        i = self.fresh("i")
                        self.emit("%s = linalg.index %d : index" % (i, self.loop_labels.index(d)))
                        idx.append(i)
                elif d in v.dims and self.rng.random() < 0.5:
                    i = self.fresh("i")
                    self.emit("%s = linalg.index %d : index" % (i, self.loop_labels.index(d)))
                    idx.append(i)
                elif self.rng.random() < 0.5:
                    # a computed index (a pooling window's): (2 * i + 1) mod size
                    k = self.rng.choice(self.loop_labels)
                    i = self.fresh("i")
                    self.emit("%s = linalg.index %d : index" % (i, self.loop_labels.index(k)))
                    j = self.fresh("j")
                    self.emit("%s = affine.apply affine_map<(x) -> ((x * 2 + 1) mod %d)>(%s)" % (
                        j, self.size[d], i))
                    idx.append(j)
                    self.step.features.add("capture_computed")
                else:
                    idx.append(self.cidx(self.rng.randrange(self.size[d])))
            x = self.fresh("x")
            self.emit("%s = tensor.extract %s[%s] : %s" % (x, src.name, ", ".join(idx), self.tyv(src)))
            return [self.op("arith.addf", a[0], self.op("math.tanh", x))]
        return self.generic([v], [e], pl)[0]

    def capture_param(self, v):
        """A parameter read at an index computed from the loop indices."""
        k = self.rng.choice(self.nonbatch(v))
        m = self.rng.choice([3, 5])
        pl_ = self.new_label(m, "c")
        pv = self.param([pl_])
        self.params_nograd.append(pv)
        e = self.empty(v.dims, like=[v])

        def pl(a):
            i = self.fresh("i")
            self.emit("%s = linalg.index %d : index" % (i, self.loop_labels.index(k)))
            j = self.fresh("j")
            self.emit("%s = arith.remui %s, %s : index" % (j, i, self.cidx(m)))
            x = self.fresh("x")
            self.emit("%s = tensor.extract %s[%s] : %s" % (x, pv.name, j, self.tyv(pv)))
            return [self.op("arith.mulf", a[0], x)]
        return self.generic([v], [e], pl)[0]

    def no_ps_operand(self, v, position=False):
        """A batch-shaped tensor computed from indices only, added to v."""
        e = self.empty(v.dims, like=[v])
        bl = self.batch_label(v)

        def pl(a):
            cands = [d for d in v.dims if d != bl]
            d = bl if position else self.rng.choice(cands)
            i = self.fresh("i")
            self.emit("%s = linalg.index %d : index" % (i, self.loop_labels.index(d)))
            ii = self.fresh("ii")
            self.emit("%s = arith.index_cast %s : index to i64" % (ii, i))
            f = self.fresh("f")
            self.emit("%s = arith.sitofp %s : i64 to f32" % (f, ii))
            return [self.op("arith.mulf", f, self.cf32(0.125))]
        c = self.generic([], [e], pl)[0]
        e2 = self.empty(v.dims, like=[v])
        return self.generic([v, c], [e2], lambda a: [self.op("arith.addf", a[0], a[1])])[0]

    def batch_size_f32(self, v):
        """tensor.dim of v's batch dimension as an f32 (the batch size as a number)."""
        bl = self.batch_label(v)
        d = self.fresh("n")
        self.emit("%s = tensor.dim %s, %s : %s" % (d, v.name, self.cidx(v.dims.index(bl)), self.tyv(v)))
        i = self.fresh("ni")
        self.emit("%s = arith.index_cast %s : index to i64" % (i, d))
        f = self.fresh("nf")
        self.emit("%s = arith.sitofp %s : i64 to f32" % (f, i))
        return f

    def tensor_arith(self, v):
        """arith/math ops on whole tensors (no linalg)."""
        t = self.tyv(v)
        a = self.fresh("ta")
        self.emit("%s = math.tanh %s : %s" % (a, v.name, t))
        other = [p for p in self.pool if p.dims == v.dims and p.et == "f32"]
        o = self.rng.choice(other) if other else v
        b = self.fresh("ta")
        self.emit("%s = arith.%s %s, %s : %s" % (b, self.rng.choice(["addf", "mulf", "subf"]), a, o.name, t))
        return V(b, v.dims)

    def slice_features(self, v):
        """Slices and concatenations along a non-batch dimension."""
        cands = [d for d in self.nonbatch(v) if self.size[d] >= 3]
        if not cands:
            return self.activation(v)
        k = self.rng.choice(cands)
        pos = v.dims.index(k)
        n = self.size[k]
        lo = self.new_label(n - 1, "f")
        dims = [lo if d == k else d for d in v.dims]

        def sizes(dd):
            out = []
            for d in dd:
                if self.size[d] is None:
                    nm = self.fresh("d")
                    self.emit("%s = tensor.dim %s, %s : %s" % (nm, v.name, self.cidx(v.dims.index(d)), self.tyv(v)))
                    out.append(nm)
                else:
                    out.append(str(self.size[d]))
            return out
        offs = ["1" if i == pos else "0" for i in range(len(v.dims))]
        sl = self.fresh("sl")
        self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s" % (
            sl, v.name, ", ".join(offs), ", ".join(sizes(dims)), ", ".join("1" for _ in dims),
            self.tyv(v), self.ty(dims)))
        if self.rng.random() < 0.5:
            # concat back with a slice of itself: [n - 1] ++ [n - 1]
            both = self.new_label(2 * (n - 1), "f")
            cdims = [both if d == lo else d for d in dims]
            c = self.fresh("cc")
            self.emit("%s = tensor.concat dim(%d) %s, %s : (%s, %s) -> %s" % (
                c, pos, sl, sl, self.ty(dims), self.ty(dims), self.ty(cdims)))
            self.step.features.add("concat")
            return self.activation(V(c, cdims))
        # insert it into a zero tensor of the original shape at offset 0
        z = self.fill(v.dims, 0.0, like=[v])
        ins = self.fresh("is")
        self.emit("%s = tensor.insert_slice %s into %s[%s] [%s] [%s] : %s into %s" % (
            ins, sl, z.name, ", ".join("0" for _ in dims), ", ".join(sizes(dims)),
            ", ".join("1" for _ in dims), self.ty(dims), self.tyv(z)))
        self.step.features.add("insert_slice")
        return self.activation(V(ins, v.dims))

    def softmax(self, v):
        k = self.rng.choice(self.nonbatch(v))
        e = self.empty(v.dims, like=[v])
        nm = self.fresh("sm")
        self.emit("%s = linalg.softmax dimension(%d) ins(%s : %s) outs(%s : %s) -> %s" % (
            nm, v.dims.index(k), v.name, self.tyv(v), e.name, self.tyv(e), self.tyv(e)))
        return V(nm, v.dims)

    def data_stat(self, v):
        """Normalise v by a statistic of the input data only (a batch mean of x):
        exact, by computing the statistic in an earlier loop."""
        x = self.inputs[0]
        mu = self.reduce_all(x, term=lambda a: self.op("math.tanh", a), out_dims=self.nonbatch(x))
        # sum over the batch, then a scalar: (sum_f mu_f) / (1 + |.|)
        m0 = self.reduce_all(mu)
        s = self.scalar_of(m0)
        a = self.op("math.absf", s)
        d = self.op("arith.addf", a, self.cf32(1.0))
        q = self.op("arith.divf", s, d)
        e = self.empty(v.dims, like=[v])
        return self.generic([v], [e], lambda x_: [self.op("arith.subf", x_[0], q)])[0]

    def capture_stat(self, v, src):
        """mu = sum over the batch of src (per feature); a per-sample payload
        reads mu with tensor.extract (a captured reduced value)."""
        nb = self.nonbatch(src)
        mu = self.reduce_all(src, term=lambda a: self.op("math.tanh", a), out_dims=nb[:1])
        e = self.empty(v.dims, like=[v])
        m = self.size[nb[0]]

        def pl(a):
            i = self.fresh("i")
            self.emit("%s = linalg.index %d : index" % (i, self.rng.randrange(len(self.loop_labels))))
            j = self.fresh("j")
            self.emit("%s = arith.remui %s, %s : index" % (j, i, self.cidx(m)))
            xv = self.fresh("x")
            self.emit("%s = tensor.extract %s[%s] : %s" % (xv, mu.name, j, self.tyv(mu)))
            return [self.op("arith.addf", a[0], self.op("math.tanh", xv))]
        return self.generic([v], [e], pl)[0]

    def outs_carry(self, v):
        """A per-sample value as the outs of a generic whose payload reads it
        (elementwise), or as the init of a per-sample reduction.

        The elementwise form, consumed by a contraction, is what upstream
        linalg-fuse-elementwise-ops miscompiles (MLIR 22; docs/Rationale.md,
        "Element-wise fusion of a producer that reads its init": seed 7 cases
        386, 4094, 5873). It is kept on purpose: ga-lower-to-cpu fuses with
        ga-fuse-elementwise, and these cases check that it still avoids it."""
        nb = self.nonbatch(v)
        if len(v.dims) >= 2 and self.rng.random() < 0.5:
            k = self.rng.choice(nb)
            dims = [d for d in v.dims if d != k]
            init = self.activation(self.reduce_all(v, out_dims=dims))
            return self.generic([v], [init], lambda a: [self.op("arith.addf", a[1], self.op("math.sin", a[0]))])[0]
        w = self.activation(v)
        return self.generic([v], [w], lambda a: [self.op("arith.mulf", a[1], self.op("math.tanh", a[0]))])[0]

    def reduce_in_for(self, v):
        """An scf.for whose body reduces over the batch into an iter_arg."""
        nb = self.nonbatch(v)
        init = self.fill(nb, 0.0)
        nm = self.fresh("rf")
        iv = self.fresh("iv")
        it = self.fresh("it")
        self.emit("%s = scf.for %s = %s to %s step %s iter_args(%s = %s) -> (%s) {" % (
            nm, iv, self.cidx(0), self.cidx(2), self.cidx(1), it, init.name, self.tyv(init)))
        self.indent += 1
        r = self.generic([v], [V(it, nb)], lambda a: [self.op("arith.addf", a[1], self.op("math.tanh", a[0]))])[0]
        self.emit("scf.yield %s : %s" % (r.name, self.tyv(r)))
        self.indent -= 1
        self.emit("}")
        self.reduced_extra.append(V(nm, nb))
        return self.activation(v)

    def scf_if(self, v, mixed=False, on_sample=False):
        cond = self.fresh("cond")
        if on_sample:
            x = self.inputs[0]
            xv = self.fresh("x")
            self.emit("%s = tensor.extract %s[%s] : %s" % (
                xv, x.name, ", ".join(self.cidx(0) for _ in x.dims), self.tyv(x)))
            self.emit("%s = arith.cmpf ogt, %s, %s : f32" % (cond, xv, self.cf32(0.0)))
        else:
            self.emit("%s = arith.cmpf ogt, %s, %s : f32" % (cond, self.lr, self.cf32(0.5)))
        nm = self.fresh("if")
        self.emit("%s = scf.if %s -> (%s) {" % (nm, cond, self.tyv(v)))
        self.indent += 1
        a = self.activation(v)
        if self.dim_in_region:
            n = self.batch_size_f32(v)
            e = self.empty(v.dims, like=[v])
            a = self.generic([a], [e], lambda x: [self.op("arith.divf", x[0], n)])[0]
        self.emit("scf.yield %s : %s" % (a.name, self.tyv(a)))
        self.indent -= 1
        self.emit("} else {")
        self.indent += 1
        if mixed:
            nb = self.nonbatch(v)
            pv = self.param(nb)
            self.params_nograd.append(pv)
            e = self.empty(v.dims, like=[v])
            added = [i for i, d in enumerate(v.dims) if d not in nb]
            b = V(self.fresh("bc"), v.dims)
            self.emit("%s = linalg.broadcast ins(%s : %s) outs(%s : %s) dimensions = [%s]" % (
                b.name, pv.name, self.tyv(pv), e.name, self.tyv(e), ", ".join(map(str, added))))
        else:
            b = self.activation(v) if self.rng.random() < 0.7 else v
        self.emit("scf.yield %s : %s" % (b.name, self.tyv(b)))
        self.indent -= 1
        self.emit("}")
        return V(nm, v.dims)

    def square_param(self, k):
        k2 = self.new_label(self.size[k], "h")
        w = self.param([k, k2])
        self.params.append(w)
        return w, k2

    def layer(self, h, w, k, k2):
        """tanh(h W) with W [k, k2]; relabels k2 -> k so types match."""
        out_dims = [k2 if d == k else d for d in h.dims]
        init = self.fill(out_dims, 0.0, like=[h])
        r = self.generic([h, w], [init], lambda a: [
            self.op("arith.addf", a[2], self.op("arith.mulf", a[0], a[1]))])[0]
        r = self.activation(r)
        return V(r.name, h.dims)

    def scf_for(self, v):
        nb = self.nonbatch(v)
        k = self.rng.choice(nb)
        w, k2 = self.square_param(k)
        steps = self.rng.choice([1, 2, 3])
        nm = self.fresh("for")
        iv = self.fresh("iv")
        it = self.fresh("it")
        self.emit("%s = scf.for %s = %s to %s step %s iter_args(%s = %s) -> (%s) {" % (
            nm, iv, self.cidx(0), self.cidx(steps), self.cidx(1), it, v.name, self.tyv(v)))
        self.indent += 1
        r = self.layer(V(it, v.dims), w, k, k2)
        if self.dim_in_region:
            n = self.batch_size_f32(r)
            e = self.empty(r.dims, like=[r])
            r = self.generic([r], [e], lambda x: [self.op("arith.mulf", x[0],
                                                           self.op("arith.divf", n, n))])[0]
        self.emit("scf.yield %s : %s" % (r.name, self.tyv(r)))
        self.indent -= 1
        self.emit("}")
        return V(nm, v.dims)

    def loop_chain(self, v):
        """iter_args (a, c1, .., cm) with a' = f(c1), c1' = f(c2), .., cm' = f(a):
        the per-sample value reaches every iter_arg only after several iterations."""
        m = self.rng.choice([2, 3, 4])
        nb = self.nonbatch(v)
        k = self.rng.choice(nb)
        w, k2 = self.square_param(k)
        inits = [v]
        for _ in range(m):
            if self.rng.random() < 0.5:
                inits.append(self.fill(v.dims, self.rng.choice([0.0, 0.5]), like=[v]))
            else:
                sub = [d for d in nb]
                pv = self.param(sub)
                self.params_nograd.append(pv)
                e = self.empty(v.dims, like=[v])
                added = [i for i, d in enumerate(v.dims) if d not in sub]
                bnm = self.fresh("bc")
                self.emit("%s = linalg.broadcast ins(%s : %s) outs(%s : %s) dimensions = [%s]" % (
                    bnm, pv.name, self.tyv(pv), e.name, self.tyv(e), ", ".join(map(str, added))))
                inits.append(V(bnm, v.dims))
        steps = self.rng.choice([m, m + 1, 2 * m + 1])
        nm = self.fresh("ch")
        iv = self.fresh("iv")
        its = [self.fresh("it") for _ in inits]
        t = self.tyv(v)
        self.emit("%s:%d = scf.for %s = %s to %s step %s iter_args(%s) -> (%s) {" % (
            nm, len(inits), iv, self.cidx(0), self.cidx(steps), self.cidx(1),
            ", ".join("%s = %s" % (a, b.name) for a, b in zip(its, inits)), ", ".join([t] * len(inits))))
        self.indent += 1
        vals = [V(i, v.dims) for i in its]
        new = []
        for j in range(len(vals)):
            src = vals[(j + 1) % len(vals)]
            if j == 0:
                new.append(self.layer(src, w, k, k2))
            else:
                new.append(self.activation(src))
        self.emit("scf.yield %s : %s" % (", ".join(x.name for x in new), ", ".join([t] * len(new))))
        self.indent -= 1
        self.emit("}")
        return [V("%s#%d" % (nm, j), v.dims) for j in range(len(inits))]

    # ---------------------------------------------------------------- the step
    def reduce_all(self, v, comb="addf", init=0.0, term=None, out_dims=()):
        """Reduction of v over every label not in out_dims (a 0-d loss by default)."""
        init_v = self.fill(list(out_dims), init, et=v.et, like=[v])

        def pl(a):
            x = term(a[0]) if term else a[0]
            return [self.op("arith." + comb, a[1], x, ty=v.et)]
        return self.generic([v], [init_v], pl)[0]

    def scalar_of(self, v0):
        """tensor<f32> -> f32."""
        nm = self.fresh("sc")
        self.emit("%s = tensor.extract %s[] : tensor<f32>" % (nm, v0.name))
        return nm

    def zero_d(self, v0, fn):
        e = self.empty([])
        return self.generic([v0], [e], lambda a: [fn(a[0])])[0]

    def pick(self, cond=lambda v: True):
        c = [v for v in self.pool if cond(v)]
        return self.rng.choice(c) if c else None

    def generate(self):
        rng = self.rng
        st = self.step
        st.dynamic = self.on("dyn_batch")
        B = rng.randrange(5, 21)
        st.batch = B
        self.run_batch = B
        self.size["b"] = None if st.dynamic else B
        N = rng.randrange(1, min(B, 6) + 1)
        st.micro_batches = N
        self.params = []          # parameters that get a gradient and an update
        self.params_nograd = []
        self.dim_source = {}
        self.pool = []
        self.coupled = []         # values of coupled features: they feed the logits
        extra_results = []

        # -- arguments
        f = self.new_label(rng.choice([3, 4, 5, 6, 8]), "f")
        x = self.per_sample_arg([f, "b"] if self.on("batch_dim1") else ["b", f])
        self.dim_source["b"] = x
        self.pool.append(x)
        self.inputs = [x]
        self.reduced_extra = []   # reductions over the batch returned as they are
        self.lr = self.scalar_arg('ga.init = "uniform"', "lr")
        if self.on("rank3_input"):
            t = self.new_label(rng.choice([2, 3, 4]), "t")
            d = self.new_label(rng.choice([3, 4]), "f")
            self.t_label = t
            self.size_t = self.size[t]
            self.size["bt"] = None if st.dynamic else B * self.size[t]
            z = self.per_sample_arg(["b", t, d] if rng.random() < 0.7 else [t, "b", d])
            self.pool.append(self.activation(z))
        n_cls = rng.choice([3, 4, 5])
        cls = self.new_label(n_cls, "k")
        et_lab = rng.choice(["i64", "i32"])
        labels = self.per_sample_arg(["b"], et_lab, "ga.range = [0, %d]" % n_cls)
        mask = self.per_sample_arg(["b"], "f32", 'ga.init = "mask"')

        # -- coupled: a sample-selecting slice (static batch only)
        if not st.dynamic and self.on("sample_slice"):
            half = self.new_label(max(1, B // 2), "s")
            sl = self.fresh("sl")
            xd = x.dims
            offs = ", ".join("0" for _ in xd)
            sizes = ", ".join(str(self.size[half]) if dd == "b" else str(self.size[dd]) for dd in xd)
            nd = [half if dd == "b" else dd for dd in xd]
            self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s" % (
                sl, x.name, offs, sizes, ", ".join("1" for _ in xd), self.tyv(x), self.ty(nd)))
            s0 = self.reduce_all(V(sl, nd), term=lambda a: self.op("math.tanh", a))
            extra_results.append(s0)

        # -- forward
        h = self.contract_param(x)
        self.pool.append(h)
        self.h0 = h
        # Each forward feature drawn for this step is used at least once, in a
        # random order among plain layers.
        kinds = [f for f in FORWARD if self.on(f)]
        self.dim_in_region = self.on("dim_in_region")
        if self.dim_in_region and "scf_if" not in kinds and "scf_for" not in kinds:
            kinds.append(rng.choice(["scf_if", "scf_for"]))
            st.features.add(kinds[-1])
        kinds += [rng.choice(["contract", "bias", "activation"]) for _ in range(rng.randrange(1, 4))]
        rng.shuffle(kinds)
        for kind in kinds:
            v = self.pick(lambda v: v.et == "f32" and self.nonbatch(v))
            if v is None:
                break
            r = None
            if kind == "reshape":
                r = self.reshape(v)
            elif kind == "contract":
                r = self.contract_param(v)
            elif kind == "bias":
                r = self.bias(v)
            elif kind == "named_ops":
                r = self.named_op(v)
            elif kind == "per_sample_reduce":
                r = self.per_sample_reduce(v)
            elif kind == "compound_expr":
                r = self.compound(v)
            elif kind == "capture_same_sample":
                r = self.capture(v, "same")
            elif kind == "capture_param":
                r = self.capture_param(v)
            elif kind == "scf_if":
                r = self.scf_if(v)
            elif kind == "scf_for":
                r = self.scf_for(v)
            elif kind == "loop_chain":
                rs = self.loop_chain(v)
                self.pool.extend(rs[1:])
                r = rs[0]
            elif kind == "no_ps_operand":
                r = self.no_ps_operand(v)
            elif kind == "tensor_arith":
                r = self.tensor_arith(v)
            elif kind == "slice_features":
                r = self.slice_features(v)
            elif kind == "softmax":
                r = self.softmax(v)
            elif kind == "data_stat":
                r = self.data_stat(v)
            elif kind == "if_mixed":
                r = self.scf_if(v, mixed=True)
            elif kind == "reduce_in_for":
                r = self.reduce_in_for(v)
            elif kind == "if_on_sample":
                r = self.scf_if(v, on_sample=True)
            elif kind == "capture_stat":
                r = self.capture_stat(v, self.inputs[0])
            elif kind == "capture_stat_param":
                r = self.capture_stat(v, h)
            elif kind == "outs_carry":
                r = self.outs_carry(v)
            else:
                r = self.activation(v, perm=rng.random() < 0.3)
            if r is not None:
                if r.dims[:1] == ["bt"] and len(r.dims) == 2 and rng.random() < 0.4:
                    r = self.uncollapse(r)
                self.pool.append(r)
        # coupled features
        if self.on("batchnorm"):
            # Statistics of h = act(x W): they depend on a parameter, so they
            # couple samples (of x alone they would be a data-only statistic).
            v = h
            if v is not None:
                mu = self.reduce_all(v, term=lambda a: self.op("arith.mulf", a, self.cf32(1.0 / B)),
                                     out_dims=self.nonbatch(v))
                e = self.empty(v.dims, like=[v])
                self.coupled.append(self.generic([v, mu], [e], lambda a: [self.op("arith.subf", a[0], a[1])])[0])
        if self.on("capture_other_sample"):
            v = self.pick(lambda v: v.et == "f32" and v.dims and v is not x)
            if v is not None:
                self.coupled.append(self.capture(v, "other"))
        if self.on("compound_batch"):
            v = self.pick(lambda v: v.et == "f32" and v is not x and "b" in v.dims)
            if v is not None:
                self.coupled.append(self.compound(v, batch=True))
        if self.on("batch_position"):
            v = self.pick(lambda v: v.et == "f32" and v is not x and self.nonbatch(v))
            if v is not None:
                self.coupled.append(self.no_ps_operand(v, position=True))
        if self.on("diag_batch"):
            bb = "bb"
            self.size[bb] = self.size["b"]
            pair = self.per_sample_arg(["b", bb])
            e = self.empty(["b"], like=[pair])
            dg = self.generic([pair], [e], lambda a: [self.op("math.tanh", a[0])], specs={0: ["b", "b"]})[0]
            self.coupled.append(dg)

        # -- logits [b, k] and the loss (through the coupled values, if any)
        for cv in self.coupled:
            if "b" in cv.dims and self.nonbatch(cv):
                self.pool.append(cv)
                continue
            # [b]: scale a pool value by it
            v = self.pick(lambda v: v.et == "f32" and "b" in v.dims and self.nonbatch(v))
            if v is None:
                continue
            e = self.empty(v.dims, like=[v])
            self.pool.append(self.generic([v, cv], [e], lambda a: [self.op("arith.mulf", a[0], a[1])])[0])
        base = self.pick(lambda v: v.et == "f32" and "b" in v.dims and self.nonbatch(v)) or x
        if self.coupled:
            base = self.pool[-1] if "b" in self.pool[-1].dims and self.nonbatch(self.pool[-1]) else base
        # contract every non-batch label of base into the class dimension
        wl = self.param(self.nonbatch(base) + [cls])
        self.params.append(wl)
        ldims = ["b", cls] if rng.random() < 0.7 else [cls, "b"]
        init = self.fill(ldims, 0.0, like=[base])
        logits = self.generic([base, wl], [init], lambda a: [
            self.op("arith.addf", a[2], self.op("arith.mulf", a[0], a[1]))])[0]
        logits = self.activation(logits)
        self.pool.append(logits)
        if self.on("gather"):
            e = self.empty(["b"], like=[labels])

            def pl(a):
                i = self.fresh("i")
                self.emit("%s = linalg.index 0 : index" % i)
                l = self.fresh("l")
                self.emit("%s = arith.index_cast %s : %s to index" % (l, a[0], et_lab))
                idx = [i if dd == "b" else l for dd in logits.dims]
                xv = self.fresh("x")
                self.emit("%s = tensor.extract %s[%s] : %s" % (xv, logits.name, ", ".join(idx), self.tyv(logits)))
                return [self.op("arith.negf", xv)]
            nll = self.generic([labels], [e], pl)[0]
        else:
            # one-hot pick: nll[b] = -sum_k [k == label] * logits[b, k]
            init = self.fill(["b"], 0.0, like=[labels])

            def pl(a):
                j = self.fresh("j")
                self.emit("%s = linalg.index %d : index" % (j, self.loop_labels.index(cls)))
                ji = self.fresh("ji")
                self.emit("%s = arith.index_cast %s : index to %s" % (ji, j, et_lab))
                eq = self.fresh("eq")
                self.emit("%s = arith.cmpi eq, %s, %s : %s" % (eq, ji, a[1], et_lab))
                sel = self.fresh("sel")
                self.emit("%s = arith.select %s, %s, %s : f32" % (sel, eq, a[0], self.cf32(0.0)))
                return [self.op("arith.subf", a[2], sel)]
            nll = self.generic([logits, labels], [init], pl)[0]
        self.pool.append(nll)

        # normalization: none, batch size as a number, constant 1/B, data-only count
        norm = rng.choice(["none", "batch_dim", "const", "count", "ones"] if not st.dynamic else
                          ["none", "batch_dim", "count", "ones"])
        st.features.add("norm_" + norm)
        count = None
        shared = norm == "count" and self.on("count_shared_multi")
        if shared:
            z0 = self.fill([], 0.0)
            z1 = self.fill([], 0.0)
            cnt_sum, msum = self.generic([mask, nll], [z0, z1], lambda a: [
                self.op("arith.addf", a[2], a[0]),
                self.op("arith.addf", a[3], self.op("arith.mulf", a[0], a[1]))])
            count = self.zero_d(cnt_sum, lambda c: self.op("arith.maximumf", c, self.cf32(1.0)))
            loss = self.generic([msum, count], [self.empty([])], lambda a: [self.op("arith.divf", a[0], a[1])])[0]
        elif norm == "count":
            cnt_sum = self.reduce_all(mask)
            count = self.zero_d(cnt_sum, lambda c: self.op("arith.maximumf", c, self.cf32(1.0)))
            z = self.fill([], 0.0)
            msum = self.generic([mask, nll], [z], lambda a: [
                self.op("arith.addf", a[2], self.op("arith.mulf", a[0], a[1]))])[0]
            loss = self.generic([msum, count], [self.empty([])], lambda a: [self.op("arith.divf", a[0], a[1])])[0]
        else:
            s = self.reduce_all(nll)
            if norm == "batch_dim":
                n = self.batch_size_f32(labels)
                loss = self.zero_d(s, lambda a: self.op("arith.divf", a, n))
            elif norm == "const":
                loss = self.zero_d(s, lambda a: self.op("arith.mulf", a, self.cf32(1.0 / B)))
            elif norm == "ones":
                # the batch size as the sum over the batch of a filled tensor
                # (no per-sample operand), used after the loop and per sample
                ones = self.fill(["b"], 1.0, like=[labels])
                count = self.reduce_all(ones)
                loss = self.generic([s, count], [self.empty([])], lambda a: [self.op("arith.divf", a[0], a[1])])[0]
            else:
                loss = s
        results = [loss] + extra_results + self.reduced_extra
        inv = None
        if count is not None and self.on("count_in_grad"):
            inv = self.op("arith.divf", self.cf32(1.0), self.scalar_of(count))
        elif norm == "batch_dim" and rng.random() < 0.5:
            inv = self.op("arith.divf", self.cf32(1.0), self.batch_size_f32(x))
            st.features.add("batch_dim_in_grad")

        # -- metrics
        if self.on("int_metric"):
            e = self.fill(["b"], -3.0e38, like=[labels])
            ei = self.fill(["b"], 0, et="i64", like=[labels])

            pl = self.argmax_payload(cls)
            _, pred = self.generic([logits], [e, ei], pl)
            zi = self.fill([], 0, et="i32")

            def pl2(a):
                li = self.fresh("li")
                if et_lab == "i64":
                    li = a[1]
                else:
                    self.emit("%s = arith.extsi %s : i32 to i64" % (li, a[1]))
                eq = self.fresh("eq")
                self.emit("%s = arith.cmpi eq, %s, %s : i64" % (eq, a[0], li))
                one = self.fresh("one")
                self.emit("%s = arith.extui %s : i1 to i32" % (one, eq))
                return [self.op("arith.addi", a[2], one, ty="i32")]
            results.append(self.generic([pred, labels], [zi], pl2)[0])
            if self.on("per_sample_result"):
                results.append(pred)
        if self.on("ordered_reduce"):
            # acc = 0.9 acc + x over the batch: not associative, exact only when
            # the micro-batches run in order with the batch the outermost loop
            v = self.pick(lambda v: v.et == "f32" and self.batch_label(v) == "b" and len(v.dims) <= 2)
            od = [d for d in self.nonbatch(v) if rng.random() < 0.5]
            init = self.fill(od, 0.5, like=[v])
            results.append(self.generic([v], [init], lambda a: [self.op(
                "arith.addf", self.op("arith.mulf", a[1], self.cf32(0.9)), a[0])])[0])
            red = [d for d in self.loop_labels if d not in od]
            if red[0] != "b":
                st.features.add("ordered_inner")
        if self.on("bool_mask"):
            # an i1 per-sample argument selecting between two per-sample terms
            bm = self.per_sample_arg(["b"], "i1")
            v = self.pick(lambda v: v.et == "f32" and self.batch_label(v) == "b")
            init = self.fill(self.nonbatch(v)[:1], 0.0, like=[v])
            results.append(self.generic([v, bm], [init], lambda a: [self.op(
                "arith.addf", a[2], self.op("arith.select", a[1], a[0], self.op("arith.negf", a[0]),
                                            ty="f32"))])[0])
        if self.on("max_reduce"):
            results.append(self.reduce_all(nll, comb="maximumf", init=-3.0e38))
        if self.on("int_batch_reduce"):
            results.append(self.reduce_all(labels, comb="maxsi", init=0) if et_lab == "i64" else
                           self.generic([labels], [self.fill([], 0, et="i32")], lambda a: [
                               self.op("arith.maxsi", a[1], a[0], ty="i32")])[0])
        if self.on("argmax_batch"):
            v = self.pick(lambda v: v.et == "f32" and "b" in v.dims and len(v.dims) <= 2) or nll
            e = self.fill([], -3.0e38)
            ei = self.fill([], 0, et="i64")

            pl = self.argmax_payload("b")
            results.extend(self.generic([v], [e, ei], pl))
            if self.loop_labels[0] != "b":
                # Not the outermost reduction loop: order-dependent, to be refused.
                st.features.add("argmax_batch_inner")
        if self.on("multi_result"):
            v = self.pick(lambda v: v.et == "f32" and "b" in v.dims)
            od = [d for d in self.nonbatch(v) if rng.random() < 0.5]
            z = self.fill(od, 0.0, like=[v])
            m = self.fill(od, -3.0e38, like=[v])
            results.extend(self.generic([v], [z, m], lambda a: [
                self.op("arith.addf", a[1], a[0]), self.op("arith.maximumf", a[2], a[0])]))
        if self.on("per_sample_result"):
            v = self.pick(lambda v: v.et == "f32" and self.batch_label(v))
            if v is not None:
                results.append(v)

        # -- gradients and the optimizer
        new_params = []
        opt = rng.choice(["sgd", "momentum", "adam"])
        st.features.add("opt_" + opt)
        lr_scaled = self.lr
        if self.on("batch_dim_in_opt"):
            # lr * B / B0: the batch size as a number, after the loop
            n = self.batch_size_f32(labels)
            lr_scaled = self.op("arith.mulf", self.lr, self.op("arith.divf", n, self.cf32(float(B))))
        self.lr_orig, self.lr = self.lr, lr_scaled
        for w in self.params:
            g = self.gradient(w, nll, inv)
            if self.on("clip_if"):
                g = self.clip(g)
            new_params.extend(self.update(w, g, opt))
        text_results = results + new_params
        opts = []
        if self.on("opt_fuse0"):
            opts.append("fuse=0")
        if self.on("opt_dyn_micro"):
            opts.append("dynamic-micro-batches=true")
        if "batchnorm" in st.features and self.on("opt_recompute"):
            opts.append("recompute-statistics=true")
            st.features.discard("batchnorm")
            st.features.add("batchnorm_recompute")
        if self.on("opt_batch_args"):
            spec = []
            for i, (n, t, a) in enumerate(self.args):
                m = re.search(r"ga.batch = (\d+) : i64(, )?", a)
                if m:
                    spec.append("%d:%s" % (i, m.group(1)))
                    self.args[i] = (n, t, a.replace(m.group(0), ""))
            opts.append("batch-args=" + ",".join(spec))
        st.pass_options = " ".join(opts)
        # Drawn last, so that a case without them is the case older versions
        # of this file generated.
        if self.on("named_contract"):
            text_results.extend(self.named_contractions(nll, mask))
        if self.on("more_combiners"):
            text_results.extend(self.more_combiners(nll, labels, et_lab))
        if self.on("reshape_interleaved"):
            text_results.extend(self.interleaved())
        if self.on("uniform_maps"):
            text_results.extend(self.uniform_maps(nll))
        if self.on("stack_batch"):
            text_results.extend(self.stack_batch())
        if self.on("chain_init_input"):
            text_results.extend(self.chain_init_input(x, nll))
        if self.on("pad_other_sample"):
            text_results.extend(self.pad_other_sample())
        f64 = self.on("f64")
        # Drawn after f64 (which finish() applies), for the same reason.
        if self.on("guarded_reduction"):
            text_results.extend(self.guarded_reduction(nll))
        if self.on("pad_at_sample"):
            text_results.extend(self.pad_at_sample())
        return self.finish(text_results, f64=f64)

    def named(self, opname, ins, init, maps=""):
        """A named linalg op on tensors writing into init; returns its result."""
        nm = self.fresh("nc")
        self.emit("%s = %s %sins(%s : %s) outs(%s : %s) -> %s" % (
            nm, opname, maps, ", ".join(v.name for v in ins), ", ".join(self.tyv(v) for v in ins),
            init.name, self.tyv(init), self.tyv(init)))
        return V(nm, init.dims)

    def named_contractions(self, nll, mask):
        """Named contractions whose reduction runs over the batch (dot, vecmat,
        matvec of [f, b], batch_reduce_matmul) or whose batch dimension is the
        training batch (matvec of [b, f], batch_matmul)."""
        out = []
        B = self.run_batch
        # dot: sum_b mask[b] nll[b]
        out.append(self.named("linalg.dot", [mask, nll], self.fill([], 0.0)))
        self.note_reduction(B)
        v = self.pick(lambda v: v.et == "f32" and len(v.dims) == 2 and "b" in v.dims)
        if v is not None:
            f = self.nonbatch(v)[0]
            if v.dims[0] == "b":
                # vecmat: sum_b mask[b] v[b, f]; matvec: v[b, f] p[f] per sample
                out.append(self.named("linalg.vecmat", [mask, v], self.fill([f], 0.0)))
                pv = self.param([f])
                self.params_nograd.append(pv)
                mv = self.named("linalg.matvec", [v, pv], self.fill(["b"], 0.0, like=[v]))
                out.append(self.reduce_all(mv, term=lambda a: self.op("math.tanh", a)))
                self.note_reduction(B * self.size[f])
            else:
                # matvec: sum_b v[f, b] mask[b]
                out.append(self.named("linalg.matvec", [v, mask], self.fill([f], 0.0)))
                self.note_reduction(B)
        z = self.pick(lambda v: v.et == "f32" and len(v.dims) == 3 and v.dims[0] == "b")
        if z is not None:
            t, d = z.dims[1], z.dims[2]
            e = self.empty(["b", d, t], like=[z])
            zt = self.fresh("t")
            self.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) permutation = [0, 2, 1]" % (
                zt, z.name, self.tyv(z), e.name, self.tyv(e)))
            zt = V(zt, ["b", d, t])
            # batch_reduce_matmul: sum_b z[b] z[b]^T, [t, t]
            t2 = self.new_label(self.size[t], "h")
            brm = self.named("linalg.batch_reduce_matmul", [z, zt], self.fill([t, t2], 0.0))
            out.append(brm)
            self.note_reduction(B * self.size[d])
            # batch_matmul per sample (attention scores), then summed
            sc = self.named("linalg.batch_matmul", [z, zt], self.fill(["b", t, t2], 0.0, like=[z]))
            out.append(self.reduce_all(sc, term=lambda a: self.op("math.tanh", a)))
        return out

    def interleaved(self):
        """collapse [t, b, d] -> [t*b, d]: row t*B + b, so a micro-batch is not
        a block of rows. A per-row contraction with a parameter, then a sum."""
        z = self.pick(lambda v: v.et == "f32" and len(v.dims) == 3 and v.dims[1] == "b")
        if z is None:
            self.step.features.discard("reshape_interleaved")
            return []
        t, d = z.dims[0], z.dims[2]
        self.size["tb"] = None if self.size["b"] is None else self.size[t] * self.size["b"]
        self.size_tb = self.size[t]
        nm = self.fresh("cl")
        self.emit("%s = tensor.collapse_shape %s [[0, 1], [2]] : %s into %s" % (
            nm, z.name, self.tyv(z), self.ty(["tb", d])))
        v = V(nm, ["tb", d])
        pv = self.param([d])
        self.params_nograd.append(pv)
        init = self.fill(["tb"], 0.0, like=[v])
        r = self.generic([v, pv], [init], lambda a: [
            self.op("arith.addf", a[2], self.op("arith.mulf", a[0], a[1]))])[0]
        return [self.reduce_all(r, term=lambda a: self.op("math.tanh", a))]

    def uniform_maps(self, nll):
        """A uniform batch-shaped tensor w[b] computed from a parameter table
        through a map that is not the identity on the batch loop (two views
        sharing one weight: floordiv; a flipped table: B-1-b; a diagonal:
        (b, b)), then sum_b nll[b] * w[b]. Static batches only (a map cannot
        name a dynamic size)."""
        if self.size["b"] is None:
            self.step.features.discard("uniform_maps")
            return []
        B = self.size["b"]
        kind = self.rng.choice(["floordiv", "reversed", "repeated"])
        self.step.features.add("uniform_" + kind)
        if kind == "floordiv":
            tl = self.new_label((B + 1) // 2, "c")
            table = self.param([tl])
            spec = [("b", "{} floordiv 2")]
        elif kind == "reversed":
            tl = self.new_label(B, "c")
            table = self.param([tl])
            spec = [("b", "%d - {}" % (B - 1))]
        else:
            tl = self.new_label(B, "c")
            table = self.param([tl, tl])
            spec = [("b", "{}"), ("b", "{}")]
        self.params_nograd.append(table)
        e = self.empty(["b"])
        w = self.generic([table], [e], lambda a: [self.op("math.tanh", a[0])],
                         specs={0: spec})[0]
        z = self.fill([], 0.0)
        return [self.generic([nll, w], [z], lambda a: [
            self.op("arith.addf", a[2], self.op("arith.mulf", a[0], a[1]))])[0]]

    def stack_batch(self):
        """torch.stack([v, tanh(v)]) as traced: tensor.concat along the batch
        dimension, tensor.expand_shape into [2, B] (stacks outermost), then
        a weighted sum whose weight is the stack index."""
        v = self.pick(lambda v: v.et == "f32" and self.batch_label(v) == "b")
        if v is None:
            self.step.features.discard("stack_batch")
            return []
        u = self.activation(v)
        p = v.dims.index("b")
        cat_dims = ["b2" if d == "b" else d for d in v.dims]
        self.size["b2"] = None if self.size["b"] is None else 2 * self.size["b"]
        cat = self.fresh("cat")
        self.emit("%s = tensor.concat dim(%d) %s, %s : (%s, %s) -> %s" % (
            cat, p, v.name, u.name, self.tyv(v), self.tyv(v), self.ty(cat_dims)))
        st = self.new_label(2, "st")
        dims = v.dims[:p] + [st] + v.dims[p:]
        groups, i = [], 0
        for k in range(len(v.dims)):
            groups.append([i, i + 1] if k == p else [i])
            i += len(groups[-1])
        shape = []
        for d in dims:
            if self.size[d] is None:
                nm = self.fresh("d")
                self.emit("%s = tensor.dim %s, %s : %s" % (
                    nm, v.name, self.cidx(v.dims.index(d)), self.tyv(v)))
                shape.append(nm)
            else:
                shape.append(str(self.size[d]))
        ex = self.fresh("stk")
        self.emit("%s = tensor.expand_shape %s [%s] output_shape [%s] : %s into %s" % (
            ex, cat, ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups),
            ", ".join(shape), self.ty(cat_dims), self.ty(dims)))
        stacked = V(ex, dims)
        self.pool.append(stacked)

        def term(a):
            i = self.fresh("i")
            self.emit("%s = linalg.index %d : index" % (i, self.loop_labels.index(st)))
            ii = self.fresh("ii")
            self.emit("%s = arith.index_cast %s : index to i64" % (ii, i))
            f = self.fresh("f")
            self.emit("%s = arith.sitofp %s : i64 to f32" % (f, ii))
            return self.op("arith.mulf", self.op("math.tanh", a), self.op("arith.addf", f, self.cf32(0.5)))
        return [self.reduce_all(stacked, term=term)]

    def chain_init_input(self, x, nll):
        """g1 = sum_b f(x[b]) (data-only) or sum_b nll[b] (parameter-
        dependent); g2 accumulates into g1 a per-sample term that also reads
        g1: the init of the chain is an input of its per-sample computation."""
        coupled = self.rng.random() < 0.5
        if coupled:
            self.step.features.add("chain_init_coupled")
            g1 = self.reduce_all(nll, term=lambda a: self.op("math.tanh", a))
            src = nll
        else:
            g1 = self.reduce_all(x, term=lambda a: self.op("math.tanh", a))
            src = x
        g2 = self.generic([src, g1], [g1], lambda a: [self.op("arith.addf", a[2], self.op(
            "arith.mulf", self.op("math.tanh", a[0]), self.op("math.tanh", a[1])))])[0]
        return [g1, g2]

    def open_pad(self, feature):
        """Opens a tensor.pad (one element on each side of a non-batch
        dimension) of a per-sample f32 value and its region's block: (the
        value, the padded dims, the pad's name, the region's index names),
        or None (and `feature` dropped) when the step has no such value."""
        v = self.pick(lambda v: v.et == "f32" and self.batch_label(v) == "b" and self.nonbatch(v))
        if v is None:
            self.step.features.discard(feature)
            return None
        k = self.nonbatch(v)[0]
        pl = self.new_label(self.size[k] + 2, "f")
        dims = [pl if d == k else d for d in v.dims]
        low = ", ".join("1" if d == k else "0" for d in v.dims)
        nm = self.fresh("pad")
        idx = [self.fresh("pi") for _ in v.dims]
        self.emit("%s = tensor.pad %s low[%s] high[%s] {" % (nm, v.name, low, low))
        self.emit("^bb0(%s):" % ", ".join("%s: index" % i for i in idx))
        return v, dims, nm, idx

    def pad_other_sample(self):
        """tensor.pad of a per-sample value along a non-batch dimension whose
        padding value is an element of sample 0 (coupled: refused)."""
        opened = self.open_pad("pad_other_sample")
        if opened is None:
            return []
        v, dims, nm, _ = opened
        x = self.fresh("x")
        self.emit("  %s = tensor.extract %s[%s] : %s" % (
            x, v.name, ", ".join(self.cidx(0) for _ in v.dims), self.tyv(v)))
        self.emit("  tensor.yield %s : f32" % x)
        self.emit("} : %s to %s" % (self.tyv(v), self.ty(dims)))
        return [self.reduce_all(V(nm, dims), term=lambda a: self.op("math.tanh", a))]

    def pad_at_sample(self):
        """tensor.pad of a per-sample value along a non-batch dimension whose
        padding value is computed from the region's index along the batch
        (its own sample: exact; the rewrite must give the region the
        sample's index in the full batch, not in the micro-batch)."""
        opened = self.open_pad("pad_at_sample")
        if opened is None:
            return []
        v, dims, nm, idx = opened
        b = idx[v.dims.index("b")]
        i, f, y = self.fresh("pn"), self.fresh("pf"), self.fresh("py")
        self.emit("  %s = arith.index_cast %s : index to i64" % (i, b))
        self.emit("  %s = arith.sitofp %s : i64 to f32" % (f, i))
        self.emit("  %s = arith.mulf %s, %s : f32" % (y, f, self.cf32(0.25)))
        self.emit("  tensor.yield %s : f32" % y)
        self.emit("} : %s to %s" % (self.tyv(v), self.ty(dims)))
        return [self.reduce_all(V(nm, dims), term=lambda a: self.op("math.tanh", a))]

    def guarded_reduction(self, nll):
        """An scf.if on a condition that does not depend on the samples (lr >
        0.5, a hyper-parameter) whose branches reduce over the batch: per-
        sample work inside the branch, an init filled inside or a non-neutral
        init from above, and in half the cases a reduction in both branches.
        With guarded_on_loss the condition compares the loss instead (it
        depends on the samples: refused)."""
        v = self.pick(lambda v: v.et == "f32" and self.batch_label(v) == "b")
        if v is None:
            self.step.features.discard("guarded_reduction")
            return []
        on_loss = self.rng.random() < 0.25
        both = self.rng.random() < 0.5
        init_above = self.fill([], 0.5) if self.rng.random() < 0.5 else None
        cond = self.fresh("gc")
        if on_loss:
            self.step.features.add("guarded_on_loss")
            s = self.scalar_of(self.reduce_all(nll))
            self.emit("%s = arith.cmpf ogt, %s, %s : f32" % (cond, s, self.cf32(0.0)))
        else:
            lr = getattr(self, "lr_orig", self.lr)
            self.emit("%s = arith.cmpf ogt, %s, %s : f32" % (cond, lr, self.cf32(0.5)))
        nm = self.fresh("gif")
        self.emit("%s = scf.if %s -> (%s) {" % (nm, cond, self.ty([])))
        self.indent += 1
        a = self.activation(v)
        init = init_above or self.fill([], 0.0)
        r = self.generic([a], [init], lambda x: [self.op(
            "arith.addf", x[1], self.op("math.tanh", x[0]))])[0]
        self.emit("scf.yield %s : %s" % (r.name, self.ty([])))
        self.indent -= 1
        self.emit("} else {")
        self.indent += 1
        if both:
            r = self.reduce_all(v, term=lambda x: self.op("math.sin", x))
        else:
            r = init_above or self.fill([], 0.0)
        self.emit("scf.yield %s : %s" % (r.name, self.ty([])))
        self.indent -= 1
        self.emit("}")
        return [V(nm, [])]

    def more_combiners(self, nll, labels, et_lab):
        """Reductions over the batch with other associative combiners."""
        out = []
        c = self.rng.choice(["minimumf", "minnumf", "maxnumf"])
        out.append(self.reduce_all(nll, comb=c, init=3.0e38 if c.startswith("min") else -3.0e38))
        # a product of terms in [0.9, 1.1]
        out.append(self.reduce_all(nll, comb="mulf", init=1.0, term=lambda a: self.op(
            "arith.addf", self.cf32(1.0), self.op("arith.mulf", self.op("math.tanh", a), self.cf32(0.1)))))
        ci = self.rng.choice(["minsi", "ori"])
        out.append(self.reduce_all(labels, comb=ci, init=(2 ** 31 - 1 if ci == "minsi" else 0)))
        return out

    def gradient(self, w, nll, inv):
        """dW[labels of W] = sum over the batch (and other labels) of a per-sample term."""
        cands = [v for v in self.pool if v.et == "f32" and self.batch_label(v) == "b"
                 and set(self.nonbatch(v)) & set(w.dims)]
        ops = []
        if cands:
            ops.append(self.rng.choice(cands))
        ops.append(nll if self.rng.random() < 0.5 or not ops else self.rng.choice(
            [v for v in self.pool if v.et == "f32" and self.batch_label(v) == "b"]))
        covered = set(d for v in ops for d in v.dims)
        if not set(w.dims) <= covered or self.rng.random() < 0.3:
            ops.append(w)
        if self.on("init_nonzero"):
            init = w
        else:
            init = self.fill(w.dims, 0.0, like=[w])

        def pl(a):
            t = a[0]
            for x in a[1:-1]:
                t = self.op("arith.mulf", t, self.unary(x, self.rng.choice(["tanh", "sin", "softsign"])))
            if inv is not None:
                t = self.op("arith.mulf", t, inv)
            return [self.op("arith.addf", a[-1], t)]
        g = self.generic(ops, [init], pl)[0]
        if self.on("accum_chain"):
            v2 = self.rng.choice([v for v in self.pool if v.et == "f32" and self.batch_label(v) == "b"])
            ops2 = [v2, w]
            g = self.generic(ops2, [g], lambda a: [self.op("arith.addf", a[2], self.op(
                "arith.mulf", self.op("math.tanh", a[0]), a[1]))])[0]
        return g

    def clip(self, g):
        nrm = self.reduce_all(g, term=lambda a: self.op("arith.mulf", a, a))
        s = self.scalar_of(nrm)
        cond = self.fresh("cl")
        self.emit("%s = arith.cmpf ogt, %s, %s : f32" % (cond, s, self.cf32(1.0)))
        nm = self.fresh("if")
        self.emit("%s = scf.if %s -> (%s) {" % (nm, cond, self.tyv(g)))
        self.indent += 1
        r = self.op("math.rsqrt", s)
        e = self.empty(g.dims)
        c = self.generic([g], [e], lambda a: [self.op("arith.mulf", a[0], r)])[0]
        self.emit("scf.yield %s : %s" % (c.name, self.tyv(c)))
        self.indent -= 1
        self.emit("} else {")
        self.emit("  scf.yield %s : %s" % (g.name, self.tyv(g)))
        self.emit("}")
        return V(nm, g.dims)

    def update(self, w, g, opt):
        e = self.empty(w.dims)
        if opt == "sgd":
            return [self.generic([w, g], [e], lambda a: [
                self.op("arith.subf", a[0], self.op("arith.mulf", self.lr, a[1]))])[0]]
        if opt == "momentum":
            m = self.param(w.dims)
            m2 = self.generic([m, g], [e], lambda a: [
                self.op("arith.addf", self.op("arith.mulf", a[0], self.cf32(0.9)), a[1])])[0]
            e2 = self.empty(w.dims)
            w2 = self.generic([w, m2], [e2], lambda a: [
                self.op("arith.subf", a[0], self.op("arith.mulf", self.lr, a[1]))])[0]
            return [w2, m2]
        m = self.param(w.dims)
        v = self.param(w.dims, init="positive")
        e2 = self.empty(w.dims)
        e3 = self.empty(w.dims)

        def pl(a):
            p, gg, mm, vv = a[0], a[1], a[2], a[3]
            m1 = self.op("arith.addf", self.op("arith.mulf", mm, self.cf32(0.9)),
                         self.op("arith.mulf", gg, self.cf32(0.1)))
            v1 = self.op("arith.addf", self.op("arith.mulf", vv, self.cf32(0.999)),
                         self.op("arith.mulf", self.op("arith.mulf", gg, gg), self.cf32(0.001)))
            den = self.op("arith.addf", self.op("math.sqrt", v1), self.cf32(1e-8))
            p1 = self.op("arith.subf", p, self.op("arith.mulf", self.lr, self.op("arith.divf", m1, den)))
            return [p1, m1, v1]
        return self.generic([w, g, m, v], [e, e2, e3], pl)

    def finish(self, results, f64=False):
        st = self.step
        st.args = list(self.args)
        st.body = self.pro + self.lines
        st.results = [(r.name, self.tyv(r)) for r in results]
        if f64:
            # Every float of the step is f32 until here (constants, element
            # types, casts); the tolerance stays the float32 one (looser).
            # (Types only: an SSA name such as %rf32 stays.)
            f64 = functools.partial(re.sub, r"(?<![\w%])f32\b|(?<=[\d?]x)f32\b", "f64")
            st.args = [(n, f64(t), a) for n, t, a in st.args]
            st.body = [f64(l) for l in st.body]
            st.results = [(n, f64(t)) for n, t in st.results]
        st.render()
        return st


def generate(seed, force=None, disable=None):
    g = Gen(random.Random(seed), force, disable)
    return g.generate()
