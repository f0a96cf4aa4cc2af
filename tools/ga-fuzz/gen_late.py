"""Features drawn after the optimizer and the pass options (keeping the
random stream of older cases).

Each returns extra results of the step: named contractions over the batch,
other combiners, an interleaving collapse, batch-shaped parameter tables read
through non-identity maps, torch.stack along the batch, accumulation chains
whose init is read per sample, tensor.pad regions that read a sample (coupled)
or the sample's own index, reductions over the batch guarded by an scf.if.
They are drawn last in ``gen.Gen.generate`` so that a case generated without
them is the case older versions of the generator produced under its name.
"""

from gen_ir import V


class LateMixin:
    """Late features for ``gen.Gen`` (uses ``IRMixin`` and ``ForwardMixin``)."""

    def emit_late_features(self, x, nll, mask, labels):
        """The features drawn after the pass options, in the order they were
        added to the generator (a case without them is the case older
        versions generated). Returns (their results, whether the step is
        float64: f64 is drawn between pad_other_sample and
        guarded_reduction, and applied by ``finish``)."""
        text_results = []
        if self.on("named_contract"):
            text_results.extend(self.named_contractions(nll, mask))
        if self.on("more_combiners"):
            text_results.extend(self.more_combiners(nll, labels, self.et_lab))
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
        # Added after f64 (which finish() applies): drawn after it.
        if self.on("guarded_reduction"):
            text_results.extend(self.guarded_reduction(nll))
        if self.on("pad_at_sample"):
            text_results.extend(self.pad_at_sample())
        return text_results, f64

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
