"""The functional updates of torch.optim's SGD, Adam and AdamW."""

import torch

from ._common import CompileError


def shared_base(steps):
    """The 1-d tensor whose elements, in order, are the tensors `steps`
    (the counters that _Optimizer.commit_states creates), or None."""
    if not steps or not isinstance(steps[0], torch.Tensor):
        return None
    base = steps[0]._base
    if base is None or base.dim() != 1 or base.numel() != len(steps) or \
            not base.is_contiguous():
        return None
    origin = base.storage_offset()
    for i, s in enumerate(steps):
        if not isinstance(s, torch.Tensor) or s._base is not base or \
                s.dim() != 0 or s.storage_offset() != origin + i:
            return None
    return base


class _Optimizer:
    """What a torch.optim optimizer contributes to the compiled step: state
    tensors per parameter, 0-d hyper-parameter arguments per parameter
    (recomputed from `param_groups` at each call, in float64 as torch.optim's
    Python code computes them) and the traced update, operation by operation
    as torch.optim's single-tensor kernels do it."""

    def __init__(self, optimizer, params):
        self.optimizer = optimizer
        self.group_of = {}
        self._groups = None
        self.refresh_groups()
        name = type(optimizer).__name__
        if isinstance(optimizer, torch.optim.AdamW):
            self.kind = "adamw"
        elif isinstance(optimizer, torch.optim.Adam):
            self.kind = "adam"
        elif isinstance(optimizer, torch.optim.SGD):
            self.kind = "sgd"
        else:
            raise CompileError(f"optimizer {name} is not supported (SGD, "
                               "Adam and AdamW are)")
        self.flags = []
        for p in params:
            g = self.group_of[p]
            if any(isinstance(v, torch.Tensor) for k, v in g.items()
                   if k != "params") or isinstance(
                       g.get("betas", (0,))[0], torch.Tensor):
                raise CompileError(f"{name}: tensor hyper-parameters are not "
                                   "supported")
            if self.kind == "sgd":
                if g["nesterov"] and (g["momentum"] <= 0 or
                                      g["dampening"] != 0):
                    raise CompileError("SGD: nesterov needs momentum > 0 and "
                                       "zero dampening")
                self.flags.append((g["momentum"] != 0, bool(g["nesterov"]),
                                   bool(g.get("maximize", False))))
            else:
                if self.kind == "adam" and g.get("decoupled_weight_decay"):
                    raise CompileError("Adam(decoupled_weight_decay=True) is "
                                       "not supported: use AdamW")
                self.flags.append((bool(g.get("maximize", False)),
                                   bool(g.get("amsgrad", False))))

    def state_names(self, index):
        if self.kind == "sgd":
            return ["momentum_buffer"] if self.flags[index][0] else []
        names = ["exp_avg", "exp_avg_sq"]
        if self.flags[index][1]:  # amsgrad
            names.append("max_exp_avg_sq")
        return names

    def num_hyper(self):
        return 5 if self.kind == "sgd" else 7

    # Rows [begin, end) of a dimension of D rows that this rank's sharded
    # optimizer state holds (`shard_rows(D)`; None: the whole state).
    shard_rows = None

    def state_shape(self, p):
        """The shape of `p`'s state tensors: `p`'s, or this rank's rows of
        it (a sharded optimizer, ZeRO-1: see _distributed)."""
        if self.shard_rows is None or p.dim() == 0:
            return tuple(p.shape)
        begin, end = self.shard_rows(p.shape[0])
        return (end - begin,) + tuple(p.shape[1:])

    def state_tensors(self, p, index):
        """The state tensors of `p`; missing ones are created as torch.optim
        creates them on its first step. A sharded optimizer keeps this
        rank's rows: a whole state (loaded, or of an unsharded step) is cut
        down to them."""
        state = self.optimizer.state[p]
        shape = self.state_shape(p)
        out = []
        for name in self.state_names(index):
            t = state.get(name)
            if t is None:
                t = torch.zeros(shape, dtype=p.dtype, device=p.device)
            elif tuple(t.shape) != shape and tuple(t.shape) == tuple(p.shape):
                begin, _ = self.shard_rows(p.shape[0])
                t = t.narrow(0, begin, shape[0]).clone()
                state[name] = t
            out.append(t)
        return out

    def refresh_groups(self):
        """Maps each parameter to its group in the optimizer's current
        param_groups: load_state_dict (or the user) may have replaced the
        group dictionaries since this object was made, and their settings
        (the learning rate) are read from the current ones."""
        groups = self.optimizer.param_groups
        if self._groups is not None and len(groups) == len(self._groups) \
                and all(g is h for g, h in zip(groups, self._groups)):
            return
        self.group_of = {}
        for group in groups:
            for p in group["params"]:
                self.group_of[p] = group
        self._groups = list(groups)

    def group_of_current(self, p):
        self.refresh_groups()
        return self.group_of[p]

    def commit_states(self, params, states):
        """Records `states[i]`, the new state tensors of `params[i]`, in the
        optimizer's state and (Adam, AdamW) advances the step counters. The
        counters this creates (on a parameter's first step) are the
        elements of one tensor, so that one addition advances them all at
        the next call (see _fastcall); each is a 0-d float32 tensor as
        torch.optim's."""
        for i, (p, tensors) in enumerate(zip(params, states)):
            state = self.optimizer.state[p]
            for name, t in zip(self.state_names(i), tensors):
                state[name] = t
        if self.kind == "sgd":
            return
        missing = [p for p in params if "step" not in self.optimizer.state[p]]
        if missing:
            counters = torch.zeros(len(missing), dtype=torch.float32)
            for p, counter in zip(missing, counters.unbind()):
                self.optimizer.state[p]["step"] = counter
        steps = [self.optimizer.state[p]["step"] for p in params]
        base = shared_base(steps)
        if base is not None:
            base.add_(1)
        elif all(isinstance(s, torch.Tensor) for s in steps):
            torch._foreach_add_(steps, 1)
        else:  # a plain number (a state of an older torch.optim)
            for p in params:
                self.optimizer.state[p]["step"] += 1

    def hyper_values(self, p, index):
        g = self.group_of_current(p)
        state = self.optimizer.state[p]
        if self.kind == "sgd":
            return self.sgd_hyper(g, state.get("momentum_buffer") is None)
        return self.adam_hyper(
            g, float(state["step"]) + 1.0 if "step" in state else 1.0)

    @staticmethod
    def sgd_hyper(g, first):
        """SGD's hyper-parameters of group `g`; `first`: the parameter has
        no momentum buffer yet."""
        # buf = mu * buf + w * grad; on the first step torch.optim sets
        # buf = grad: the zero buffer with mu = 0, w = 1 gives exactly that.
        mu = 0.0 if first else g["momentum"]
        w = 1.0 if first else 1.0 - g["dampening"]
        return [-g["lr"], g["weight_decay"], mu, w, g["momentum"]]

    def adam_hyper(self, g, step):
        """Adam's (AdamW's) hyper-parameters of group `g` at step `step`
        (1 for the first), in float64 as torch.optim's Python code."""
        beta1, beta2 = g["betas"]
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = g["lr"] / bias_correction1
        if self.kind == "adamw":
            decay = 1 - g["lr"] * g["weight_decay"]
        else:
            decay = g["weight_decay"]
        return [1 - beta1, beta2, 1 - beta2, bias_correction2 ** 0.5,
                -step_size, decay, g["eps"]]

    def update(self, index, p, grad, states, hyper):
        """Traced: the new parameter and the new states."""
        if self.kind == "sgd":
            neg_lr, weight_decay, mu, w, momentum = hyper
            has_momentum, nesterov, maximize = self.flags[index]
            if maximize:
                grad = -grad
            grad = grad + weight_decay * p
            new_states = []
            if has_momentum:
                buf = states[0] * mu + w * grad
                new_states.append(buf)
                grad = grad + momentum * buf if nesterov else buf
            return p + neg_lr * grad, new_states
        one_minus_beta1, beta2, one_minus_beta2, bc2_sqrt, neg_step_size, \
            decay, eps = hyper
        if self.flags[index][0]:
            grad = -grad
        if self.kind == "adamw":
            p = p * decay
        else:
            grad = grad + decay * p
        exp_avg, exp_avg_sq = states[:2]
        exp_avg = torch.lerp(exp_avg, grad, one_minus_beta1)
        exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * grad * grad
        new_states = [exp_avg, exp_avg_sq]
        if self.flags[index][1]:
            # amsgrad: the denominator from the running maximum of the
            # second moments (torch.maximum, as _single_tensor_adam).
            max_exp_avg_sq = torch.maximum(states[2], exp_avg_sq)
            new_states.append(max_exp_avg_sq)
            denom = torch.sqrt(max_exp_avg_sq) / bc2_sqrt + eps
        else:
            denom = torch.sqrt(exp_avg_sq) / bc2_sqrt + eps
        return p + neg_step_size * exp_avg / denom, new_states
