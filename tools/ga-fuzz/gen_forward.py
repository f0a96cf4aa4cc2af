"""Forward features of the generator: per-sample layers without regions.

Each method takes a per-sample value ``v`` of the step's pool and returns a
new per-sample value (or None): contractions with parameters (named or
generic, transposing maps), activations, biases, named ops, per-sample
reductions, reshapes, compound index expressions, captured tensors read with
tensor.extract, index-only operands, arith on whole tensors, slices and
concatenations, softmax. The coupled variants (``compound(batch=True)``,
``capture(mode="other")``, ``no_ps_operand(position=True)``) read another
sample or the sample's position and must be refused.
"""

from gen_ir import V


class ForwardMixin:
    """Per-sample forward layers for ``gen.Gen`` (uses ``IRMixin``)."""

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
