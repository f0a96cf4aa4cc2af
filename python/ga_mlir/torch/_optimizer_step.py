"""What a torch.optim optimizer contributes to one compiled step (see
_optimizers): state tensors per trained parameter, 0-d hyper-parameter
arguments per parameter group, and the optimizer's own step traced after
the gradients."""

import torch

from . import _optimizers
from ._common import CompileError


class _Optimizer:
    """The optimizer's part of a step's layout (_export._Spec): for trained
    parameter i, `arg_names[i]` (the state tensors the step takes and
    returns, in order); `hyper_keys`, the (group, setting, mode) of the 0-d
    hyper-parameter arguments, then one flag per parameter of `firsts`
    (those whose first step creates their state from the gradient: 1 while
    it is missing)."""

    # Rows [begin, end) of a dimension of D rows that this rank's sharded
    # optimizer state holds (`shard_rows(D)`; None: the whole state).
    shard_rows = None

    def __init__(self, optimizer, params):
        _optimizers.refuse_unsupported(optimizer)
        self.optimizer = optimizer
        self.params = list(params)
        # The whole shapes (a sharded-parameter step cuts the parameters to
        # a rank's rows after tracing: _fsdp).
        self.full_shapes = [tuple(p.shape) for p in self.params]
        self.group_of = {}
        self._groups = None
        self.refresh_groups()
        groups = optimizer.param_groups
        self.group_index = [next(k for k, g in enumerate(groups)
                                 if g is self.group_of[p])
                            for p in self.params]
        self.layouts = _optimizers.layouts(optimizer, self.params)
        self.arg_names = [_optimizers.arg_names(optimizer, p, lay)
                          for p, lay in zip(self.params, self.layouts)]
        self.firsts = [i for i, lay in enumerate(self.layouts)
                       if lay.from_gradient]
        for p, names, lay in zip(self.params, self.arg_names, self.layouts):
            if set(names) != set(lay.names):
                raise CompileError(
                    f"{type(optimizer).__name__}: the state of a parameter "
                    f"of shape {list(p.shape)} holds {sorted(names)}, but "
                    f"its step keeps {sorted(lay.names)} (a state loaded "
                    "from another optimizer or version?)",
                    code="optimizer-state-mismatch")
        self.hyper_keys = []
        self.modes = []  # per group: its step arguments (see _probe)
        for k, group in enumerate(groups):
            # As `signature` (the cache's key) finds them: over the group's
            # parameters that require grad.
            members = [p for p in group["params"] if p.requires_grad]
            lays = _optimizers.layouts(optimizer, members)
            modes = _optimizers.group_modes(
                optimizer, k, members,
                [_optimizers.arg_names(optimizer, p, lay)
                 for p, lay in zip(members, lays)])
            self.modes.append(modes)
            self.hyper_keys += [(k, key, modes[key]) for key in
                                sorted(modes, key=lambda x: (x[0],
                                                             x[1] or 0))]
        self.signature = _optimizers.signature(optimizer)

    # -- layout ------------------------------------------------------------
    def state_names(self, index):
        """The state tensors of parameter `index` that the step takes."""
        return list(self.arg_names[index])

    def num_hyper(self):
        return len(self.hyper_keys) + len(self.firsts)

    def _whole(self, index, name):
        lay = self.layouts[index]
        k = lay.names.index(name)
        return lay.shapes[k], lay.dtypes[k]

    def sharded(self, index, name):
        """Whether state `name` of parameter `index` is cut to this rank's
        rows (ZeRO-1): a state of the parameter's own shape."""
        shape = self.full_shapes[index]
        return self.shard_rows is not None and len(shape) >= 1 and \
            self._whole(index, name)[0] == shape

    def state_type(self, index, name):
        """(shape, dtype) of state `name` of parameter `index` as the step
        takes it: its whole shape, or this rank's rows of it."""
        shape, dtype = self._whole(index, name)
        if self.sharded(index, name):
            begin, end = self.shard_rows(shape[0])
            shape = (end - begin,) + tuple(shape[1:])
        return tuple(shape), dtype

    # -- calls -------------------------------------------------------------
    def refresh_groups(self):
        """Maps each parameter to its group in the optimizer's current
        param_groups: load_state_dict (or the user) may have replaced the
        group dictionaries since this object was made."""
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

    def state_tensors(self, p, index, for_trace=False):
        """The state tensors of `p` that the step takes; missing ones are
        created as its first step creates them. A sharded optimizer keeps
        this rank's rows: a whole state (loaded, or of an unsharded step)
        is cut down to them. For the trace: copies at the whole shape."""
        names = self.arg_names[index]
        state = self.optimizer.state[p]
        if not state and not for_trace:
            if not self.layouts[index].from_gradient:
                # Every parameter that lacks it, with one eager step.
                _optimizers._initial_states(self.optimizer, [
                    q for q, lay in zip(self.params, self.layouts)
                    if not lay.from_gradient and
                    not self.optimizer.state.get(q)])
            else:  # placeholders: the first step's results are selected
                return [torch.zeros(self.state_type(index, n)[0],
                                    dtype=self.state_type(index, n)[1],
                                    device=p.device) for n in names]
        out = []
        for name in names:
            if for_trace:  # the values do not enter the trace
                shape, dtype = self._whole(index, name)
                t = state.get(name)
                out.append(t.detach().clone() if t is not None and
                           tuple(t.shape) == shape
                           else torch.zeros(shape, dtype=dtype))
                continue
            t = state[name]
            shape, _ = self.state_type(index, name)
            if tuple(t.shape) != shape and self.sharded(index, name) and \
                    tuple(t.shape) == self._whole(index, name)[0]:
                begin, _ = self.shard_rows(self.full_shapes[index][0])
                t = t.narrow(0, begin, shape[0]).clone()
                state[name] = t
            out.append(t)
        return out

    def hyper_values(self):
        """The current values of the 0-d hyper-parameter arguments."""
        groups, state = self.optimizer.param_groups, self.optimizer.state
        return [float(_optimizers._value(groups[k], key))
                for k, key, _ in self.hyper_keys] + [
            0.0 if state.get(self.params[i]) else 1.0 for i in self.firsts]

    def commit_states(self, params, states):
        """Records `states[i]`, the new state tensors of `params[i]` (in the
        order of arg_names), in the optimizer's state."""
        for i, (p, tensors) in enumerate(zip(params, states)):
            state = self.optimizer.state[p]
            for name, t in zip(self.arg_names[i], tensors):
                state[name] = t
        # The step ran: what an LR scheduler checks before its first step
        # (set by its wrapper of optimizer.step(), which the compiled step
        # does not call).
        self.optimizer._opt_called = True

    # -- the trace ---------------------------------------------------------
    def traced_step(self, params, grads, states, hyper):
        """Traced: the optimizer's own step on the traced parameters,
        gradients, states (per parameter, in the order of arg_names) and
        hyper-parameters; returns (new parameters, new states per
        parameter). For the parameters of `firsts`, the first step (without
        state) is traced too, and selected by their flags."""
        n = len(self.hyper_keys)
        new_params, new_states = self._step_on(params, grads, states,
                                               hyper[:n], range(len(params)))
        if self.firsts:
            first_params, first_states = self._step_on(
                [params[i] for i in self.firsts],
                [grads[i].clone() for i in self.firsts],
                [[] for _ in self.firsts], hyper[:n], self.firsts)
            for k, (i, flag) in enumerate(zip(self.firsts, hyper[n:])):
                first = flag != 0
                new_params[i] = torch.where(first, first_params[k],
                                            new_params[i])
                new_states[i] = [torch.where(first, a, b) for a, b in
                                 zip(first_states[k], new_states[i])]
        return new_params, new_states

    def _step_on(self, params, grads, states, hyper, indices):
        """The traced step of the trained parameters `indices` (`params`,
        `grads`, `states` theirs: the arg_names' tensors, or none for a
        first step)."""
        values = {}
        for (k, key, _), h in zip(self.hyper_keys, hyper):
            values.setdefault(k, []).append((key, h))
        # Copies: the step updates them in place, which functionalization
        # turns into new values (an update of the arguments themselves
        # would be written back into them).
        qs = [p.detach().clone() for p in params]
        for q, g in zip(qs, grads):
            q.grad = g
        groups = []
        for k, group in enumerate(self.optimizer.param_groups):
            members = [q for q, i in zip(qs, indices)
                       if self.group_index[i] == k]
            if members:
                groups.append((_optimizers._with_values(
                    group, values.get(k, [])), members))
        shadow = _optimizers._shadow(self.optimizer, groups)
        for i, q, st in zip(indices, qs, states):
            shadow.state[q] = {n: _optimizers.widened(s, q) for n, s in
                               zip(self.arg_names[i], st)}
        _optimizers._run(shadow)
        new_states = []
        for i, q in zip(indices, qs):
            state = shadow.state[q]
            names = self.arg_names[i]
            if set(state) != set(names):
                raise CompileError(
                    f"{type(self.optimizer).__name__}: the traced step left "
                    f"the state {sorted(state)} where a step run eagerly "
                    f"left {sorted(names)}",
                    code="optimizer-not-traceable")
            new_states.append([state[n].to(self._whole(i, n)[1])
                               for n in names])
        for q in qs:
            q.grad = None
        return qs, new_states
