"""Gradients, the optimizer update and the step's finish.

Gradients are reductions over the batch of per-sample terms shaped like each
parameter (not the true gradient: what matters is the dependence structure of
a real step), optionally clipped in an scf.if on their norm; the update is
SGD, momentum or Adam. ``finish`` assembles the ``Step`` (and rewrites it to
float64 when that feature is drawn).
"""

import functools
import re

from gen_ir import V


class BackwardMixin:
    """Gradients, updates and the final assembly for ``gen.Gen``."""

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
