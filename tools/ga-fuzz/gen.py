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

import random
import re

from gen_backward import BackwardMixin
from gen_forward import ForwardMixin
from gen_ir import IRMixin, Step, V
from gen_late import LateMixin
from gen_regions import RegionMixin
from gen_tables import COUPLING, F32_EPS, FORWARD, PROBS

# The names callers use (ga-fuzz.py, reduce.py): gen.generate, gen.Step,
# gen.Gen, gen.PROBS, gen.COUPLING, gen.FORWARD, gen.F32_EPS, gen.V.
__all__ = ["COUPLING", "F32_EPS", "FORWARD", "PROBS", "Gen", "Step", "V", "generate"]


class Gen(IRMixin, ForwardMixin, RegionMixin, LateMixin, BackwardMixin):
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


def generate(seed, force=None, disable=None):
    g = Gen(random.Random(seed), force, disable)
    return g.generate()
