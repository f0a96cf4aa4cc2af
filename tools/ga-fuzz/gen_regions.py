"""Forward features of the generator with regions or batch statistics.

scf.if / scf.for around per-sample values (also with ``tensor.dim`` of the
batch inside the region, a rotating loop-carried chain, a reduction over the
batch inside a loop or a branch on a sample's value, both coupled), data-only
statistics of the inputs used per sample, statistics read with tensor.extract
in a payload, and a per-sample ``outs`` operand read by its payload.
"""

from gen_ir import V


class RegionMixin:
    """Forward features with regions or statistics for ``gen.Gen``."""

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
