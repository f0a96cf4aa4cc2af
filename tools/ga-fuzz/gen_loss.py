"""The logits, the loss and the metrics of a generated step.

The logits [B, K] contract a per-sample value of the forward pool (through
the coupled features' values, if any) with a parameter; the per-sample loss
is a negative log-likelihood picked by the integer labels (a gather as
torch-mlir's cross-entropy emits it, or a one-hot sum); the loss is its sum
over the batch normalised by nothing, the batch size as a number, 1/B, a
data-only count or a sum of ones. The metrics and other reductions over the
batch (integer counts, max/argmax, order-dependent accumulations, i1
selects, multi-result reductions) are extra results of the step.
"""


class LossMixin:
    """Phases of ``gen.Gen.generate`` between the forward pass and the
    gradients."""

    def emit_logits(self, x):
        """The logits [B, K] (or [K, B]) from a pool value (the last coupled
        one when there is one, so that coupling reaches the loss); [B]-shaped
        coupled values first scale a pool value."""
        rng = self.rng
        cls = self.cls
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
        return logits

    def emit_nll(self, logits, labels):
        """The per-sample loss nll[b] = -logits[b, label[b]]: a gather with
        tensor.extract at linalg.index 0 (torch-mlir's cross-entropy) or a
        one-hot sum over the classes."""
        cls, et_lab = self.cls, self.et_lab
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
        return nll

    def emit_loss(self, nll, mask, labels):
        """The loss: the sum over the batch of nll, normalised by nothing, the
        batch size as a number (tensor.dim), 1/B (static batches), a data-only
        count of the mask (possibly sharing a multi-result reduction with the
        masked sum) or the sum of a filled [B] tensor. Returns (loss, count or
        None, the normalisation's name)."""
        rng = self.rng
        st = self.step
        B = self.run_batch
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
        return loss, count, norm

    def gradient_scale(self, count, norm, x):
        """The factor of every per-sample gradient term: 1/count (a value
        reduced over the batch, used per sample), 1/B through tensor.dim, or
        None."""
        inv = None
        if count is not None and self.on("count_in_grad"):
            inv = self.op("arith.divf", self.cf32(1.0), self.scalar_of(count))
        elif norm == "batch_dim" and self.rng.random() < 0.5:
            inv = self.op("arith.divf", self.cf32(1.0), self.batch_size_f32(x))
            self.step.features.add("batch_dim_in_grad")
        return inv

    def emit_metrics(self, logits, labels):
        """Metrics: the correct-prediction count (argmax per sample, an
        integer sum over the batch), an order-dependent accumulation over the
        batch, a sum selected by an i1 per-sample argument. Returns the extra
        results."""
        rng = self.rng
        st = self.step
        cls, et_lab = self.cls, self.et_lab
        results = []
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
        return results

    def emit_batch_reductions(self, nll, labels):
        """Other reductions over the batch returned as results: max of the
        loss, maxsi of the labels, (max, argmax) of a pool value (coupled when
        the batch is not the outermost reduction loop), a two-result sum and
        max, and a per-sample value returned as it is."""
        rng = self.rng
        st = self.step
        et_lab = self.et_lab
        results = []
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
        return results
