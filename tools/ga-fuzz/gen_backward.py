"""Gradients, the optimizer update, the pass options and the step's finish.

Gradients are reductions over the batch of per-sample terms shaped like each
parameter (not the true gradient: what matters is the dependence structure of
a real step), optionally clipped in an scf.if on their norm; the update is
SGD, momentum or Adam. ``choose_pass_options`` draws the case's
--ga-accumulate options. ``finish`` assembles the ``Step`` (and rewrites it to
float64 when that feature is drawn).
"""

import functools
import re

from gen_ir import V


class BackwardMixin:
    """Gradients, updates and the final assembly for ``gen.Gen``."""

    def emit_optimizer(self, labels, nll, inv):
        """The gradient of every parameter (each optionally clipped) and its
        update by SGD, momentum or Adam, with the learning rate optionally
        scaled by the batch size as a number (a use of the batch size after
        the loop). Returns the updated parameters (and optimizer states)."""
        new_params = []
        opt = self.rng.choice(["sgd", "momentum", "adam"])
        self.step.features.add("opt_" + opt)
        lr_scaled = self.lr
        if self.on("batch_dim_in_opt"):
            # lr * B / B0: the batch size as a number, after the loop
            n = self.batch_size_f32(labels)
            b0 = self.cf32(float(self.run_batch))
            lr_scaled = self.op("arith.mulf", self.lr, self.op("arith.divf", n, b0))
        self.lr_orig, self.lr = self.lr, lr_scaled
        for w in self.params:
            g = self.gradient(w, nll, inv)
            if self.on("clip_if"):
                g = self.clip(g)
            new_params.extend(self.update(w, g, opt))
        return new_params

    def choose_pass_options(self):
        """The --ga-accumulate options of the case: fuse=0,
        dynamic-micro-batches=true, recompute-statistics=true (only with a
        BatchNorm, which is then exact: the feature becomes
        batchnorm_recompute), batch-args=... (the ga.batch attributes are
        then removed from the arguments). Returns them space-separated."""
        st = self.step
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
        return " ".join(opts)

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
