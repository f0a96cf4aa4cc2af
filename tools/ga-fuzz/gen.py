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

This module holds ``Gen`` (the phases of ``Gen.generate``, in their draw
order) and ``generate``; the rest is in mixins: gen_tables (PROBS, COUPLING,
FORWARD), gen_ir (V, Step, the text-emission core), gen_forward and
gen_regions (forward features), gen_loss (logits, loss, metrics),
gen_backward (gradients, optimizer, pass options, finish) and gen_late (the
features drawn last).
"""

import random

from gen_backward import BackwardMixin
from gen_forward import ForwardMixin
from gen_ir import IRMixin, Step, V
from gen_late import LateMixin
from gen_loss import LossMixin
from gen_regions import RegionMixin
from gen_tables import COUPLING, F32_EPS, FORWARD, PROBS

# The names callers use (ga-fuzz.py, reduce.py): gen.generate, gen.Step,
# gen.Gen, gen.PROBS, gen.COUPLING, gen.FORWARD, gen.F32_EPS, gen.V.
__all__ = ["COUPLING", "F32_EPS", "FORWARD", "PROBS", "Gen", "Step", "V", "generate"]


class Gen(IRMixin, ForwardMixin, RegionMixin, LateMixin, LossMixin, BackwardMixin):
    """The generator of one step, from one random stream (``rng``): the
    features in ``force`` are always on, those in ``disable`` never; ``on``
    draws its number either way, so neither changes any other draw."""

    def __init__(self, rng, force=None, disable=None):
        self.rng = rng
        self.force = set(force or ())
        self.disable = set(disable or ())
        self.n = 0
        self.args = []        # (name, type, attrs)
        self.consts = {}      # text -> name
        self.pro = []         # the constants, hoisted to the top of the body
        self.lines = []       # the rest of the body
        self.indent = 1
        self.size = {}        # label -> int (None for the dynamic batch)
        self.step = Step()

    def generate(self):
        """Emits the whole step and returns its ``Step``.

        The phases run in a fixed order and every random draw happens in that
        order: a case is named by its seed alone, so moving a draw from one
        phase to another (or adding one before the late features) would change
        every case generated after it."""
        self.setup_batch()
        x, labels, mask = self.emit_arguments()
        extra_results = self.emit_sample_slice(x)
        h = self.emit_forward(x)
        self.emit_coupled(x, h)
        logits = self.emit_logits(x)
        nll = self.emit_nll(logits, labels)
        loss, count, norm = self.emit_loss(nll, mask, labels)
        results = [loss] + extra_results + self.reduced_extra
        inv = self.gradient_scale(count, norm, x)
        results += self.emit_metrics(logits, labels)
        results += self.emit_batch_reductions(nll, labels)
        text_results = results + self.emit_optimizer(labels, nll, inv)
        self.step.pass_options = self.choose_pass_options()
        late, f64 = self.emit_late_features(x, nll, mask, labels)
        return self.finish(text_results + late, f64=f64)

    # ---------------------------------------------------------------- phases
    def setup_batch(self):
        """Draws the batch size (5 to 20, static or, with dyn_batch, `?`) and
        the number of micro-batches (1 to 6, often not dividing the batch),
        and resets the per-step pools."""
        st = self.step
        st.dynamic = self.on("dyn_batch")
        B = self.rng.randrange(5, 21)
        st.batch = B
        self.run_batch = B
        self.size["b"] = None if st.dynamic else B
        st.micro_batches = self.rng.randrange(1, min(B, 6) + 1)
        self.params = []          # parameters that get a gradient and an update
        self.params_nograd = []   # parameters read but not updated
        self.dim_source = {}      # label -> a value to take its dynamic size from
        self.pool = []            # per-sample values the next feature may read
        self.coupled = []         # values of coupled features: they feed the logits

    def emit_arguments(self):
        """The per-sample arguments and the learning rate: an input x ([B, F]
        or [F, B]), optionally a [B, T, D] (or [T, B, D]) input, integer
        labels with ga.range and a padding mask. Returns (x, labels, mask);
        the class label and the labels' type are kept in self.cls and
        self.et_lab."""
        rng = self.rng
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
            self.size["bt"] = None if self.step.dynamic else self.run_batch * self.size[t]
            z = self.per_sample_arg(["b", t, d] if rng.random() < 0.7 else [t, "b", d])
            self.pool.append(self.activation(z))
        n_cls = rng.choice([3, 4, 5])
        self.cls = self.new_label(n_cls, "k")
        self.et_lab = rng.choice(["i64", "i32"])
        labels = self.per_sample_arg(["b"], self.et_lab, "ga.range = [0, %d]" % n_cls)
        mask = self.per_sample_arg(["b"], "f32", 'ga.init = "mask"')
        return x, labels, mask

    def emit_sample_slice(self, x):
        """Coupled: a slice of the first half of the samples, reduced and
        returned (static batches only: the slice's size is a constant).
        Returns the extra results."""
        extra_results = []
        if not self.step.dynamic and self.on("sample_slice"):
            half = self.new_label(max(1, self.run_batch // 2), "s")
            sl = self.fresh("sl")
            xd = x.dims
            offs = ", ".join("0" for _ in xd)
            sizes = ", ".join(str(self.size[half]) if dd == "b" else str(self.size[dd]) for dd in xd)
            nd = [half if dd == "b" else dd for dd in xd]
            self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s" % (
                sl, x.name, offs, sizes, ", ".join("1" for _ in xd), self.tyv(x), self.ty(nd)))
            s0 = self.reduce_all(V(sl, nd), term=lambda a: self.op("math.tanh", a))
            extra_results.append(s0)
        return extra_results

    def emit_forward(self, x):
        """The forward pass: h = act(x W), then each forward feature drawn for
        this step at least once, in a random order among plain layers
        (contractions, biases, activations), each on a random value of the
        pool; the results join the pool. Returns h (the statistics of the
        coupled features read it)."""
        rng = self.rng
        h = self.contract_param(x)
        self.pool.append(h)
        kinds = [f for f in FORWARD if self.on(f)]
        self.dim_in_region = self.on("dim_in_region")
        if self.dim_in_region and "scf_if" not in kinds and "scf_for" not in kinds:
            kinds.append(rng.choice(["scf_if", "scf_for"]))
            self.step.features.add(kinds[-1])
        kinds += [rng.choice(["contract", "bias", "activation"]) for _ in range(rng.randrange(1, 4))]
        rng.shuffle(kinds)
        for kind in kinds:
            v = self.pick(lambda v: v.et == "f32" and self.nonbatch(v))
            if v is None:
                break
            r = self.forward_layer(kind, v, h)
            if r is not None:
                if r.dims[:1] == ["bt"] and len(r.dims) == 2 and rng.random() < 0.4:
                    r = self.uncollapse(r)
                self.pool.append(r)
        return h

    def forward_layer(self, kind, v, h):
        """One forward feature (or plain layer) `kind` applied to v; None
        when it does not apply to v's shape."""
        if kind == "loop_chain":
            # every iter_arg of the chain is a per-sample value
            rs = self.loop_chain(v)
            self.pool.extend(rs[1:])
            return rs[0]
        layers = {
            "reshape": self.reshape,
            "contract": self.contract_param,
            "bias": self.bias,
            "named_ops": self.named_op,
            "per_sample_reduce": self.per_sample_reduce,
            "compound_expr": self.compound,
            "capture_same_sample": lambda v: self.capture(v, "same"),
            "capture_param": self.capture_param,
            "scf_if": self.scf_if,
            "scf_for": self.scf_for,
            "no_ps_operand": self.no_ps_operand,
            "tensor_arith": self.tensor_arith,
            "slice_features": self.slice_features,
            "softmax": self.softmax,
            "data_stat": self.data_stat,
            "if_mixed": lambda v: self.scf_if(v, mixed=True),
            "reduce_in_for": self.reduce_in_for,
            "if_on_sample": lambda v: self.scf_if(v, on_sample=True),
            "capture_stat": lambda v: self.capture_stat(v, self.inputs[0]),
            "capture_stat_param": lambda v: self.capture_stat(v, h),
            "outs_carry": self.outs_carry,
        }
        if kind in layers:
            return layers[kind](v)
        return self.activation(v, perm=self.rng.random() < 0.3)

    def emit_coupled(self, x, h):
        """The coupled features (refusal expected): BatchNorm statistics of h,
        a payload reading another sample, x[b floordiv 2], the sample's
        position as a number, x[b, b]. Their values are kept in self.coupled,
        which the logits read."""
        if self.on("batchnorm"):
            # Statistics of h = act(x W): they depend on a parameter, so they
            # couple samples (of x alone they would be a data-only statistic).
            v = h
            if v is not None:
                inv_b = 1.0 / self.run_batch
                mu = self.reduce_all(v, term=lambda a: self.op("arith.mulf", a, self.cf32(inv_b)),
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


def generate(seed, force=None, disable=None):
    """The step of case `seed` (features in `force` always, in `disable`
    never; both keep the random stream of every other draw)."""
    g = Gen(random.Random(seed), force, disable)
    return g.generate()
