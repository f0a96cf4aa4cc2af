"""The domains of an exported step's arguments (`ga.init`), so that the
tools that draw inputs for a step (ga-verify, ga_mlir.verify,
ga_mlir.draw_inputs) draw values the step is defined on: an Adam step whose
second moments are drawn negative takes square roots of negative numbers,
and its reference is NaN ("the inputs are outside the step's domain").

Only what the layout of the step says is marked (_Spec: the optimizer's
state names, its 0-d settings); every other argument keeps the tools'
default (normal values, integers in a small range). No pass reads `ga.init`
(docs/GADialect.md): the compiled step is the same."""

# Optimizer states (PyTorch's names in optimizer.state) that are never
# negative, and that the steps divide by or take the square root of: second
# moments and their maxima (Adam, AdamW, NAdam, RAdam, Adamax's infinity
# norm), running squares (RMSprop, Adadelta), Adagrad's sums, Adafactor's
# variances, step counts (bias corrections 1 - beta^step), ASGD's eta and
# mu, NAdam's momentum product, Rprop's step sizes.
_POSITIVE_STATES = frozenset({
    "exp_avg_sq", "max_exp_avg_sq", "exp_inf", "square_avg", "acc_delta",
    "sum", "row_var", "col_var", "variance", "step", "eta", "mu",
    "mu_product", "step_size"})


def argument_domains(spec):
    """The `ga.init` of each argument of the step of `spec` (None: the
    tools' default): "positive" for the states of _POSITIVE_STATES, and
    "uniform" (in [0, 1)) for the 0-d settings (learning rates, betas, eps,
    weight decay, momentum: a beta drawn negative is raised to a fractional
    power), in the order of _layout.flat_arguments."""
    domains = [None] * spec.arg_count()
    k = len(spec.params) + len(spec.frozen) + len(spec.buffer_names)
    for i in range(len(spec.params)):
        for name in spec.opt.state_names(i):
            if name in _POSITIVE_STATES:
                domains[k] = "positive"
            k += 1
    for j in range(spec.opt.num_hyper()):
        domains[k + j] = "uniform"
    return domains


def mark_domains(module, spec):
    """Sets argument_domains(spec) as `ga.init` on @train_step of `module`
    (torch-mlir's Python API), keeping any other argument attribute."""
    from torch_mlir import ir as mlir

    func = next((op for op in module.body.operations
                 if op.operation.name == "func.func" and
                 mlir.StringAttr(op.attributes["sym_name"]).value ==
                 "train_step"), None)
    if func is None:
        return
    domains = argument_domains(spec)
    arguments = func.regions[0].blocks[0].arguments
    if len(arguments) != len(domains):
        return  # a layout this module does not follow: nothing is claimed
    with module.context, mlir.Location.unknown():
        old = [mlir.DictAttr(a) for a in mlir.ArrayAttr(
            func.attributes["arg_attrs"])] \
            if "arg_attrs" in func.attributes else \
            [mlir.DictAttr.get({}) for _ in domains]
        new = []
        for attrs, domain in zip(old, domains):
            entries = {attrs[i].name: attrs[i].attr
                       for i in range(len(attrs))}
            if domain is not None:
                entries["ga.init"] = mlir.StringAttr.get(domain)
            new.append(mlir.DictAttr.get(entries))
        func.attributes["arg_attrs"] = mlir.ArrayAttr.get(new)
