"""The layout of a traced step's arguments and results (_Spec): what
_export traces, _layout checks a model against and _call binds tensors by,
below all three."""

from ._metrics import Metrics
from ._optimizer_step import _Optimizer


class _Spec:
    """The layout of the traced function's arguments and results."""

    def __init__(self, model, optimizer, num_inputs, unused=(),
                 mutated=(), batch_dims=None, layouts=()):
        named = dict(model.named_parameters())  # tied weights once
        in_optimizer = set()
        for group in optimizer.param_groups:
            in_optimizer.update(id(p) for p in group["params"])
        self.train_names = [n for n, p in named.items()
                            if id(p) in in_optimizer and p.requires_grad
                            and n not in unused]
        self.frozen_names = [n for n in named if n not in self.train_names]
        self.params = [named[n] for n in self.train_names]
        self.frozen = [named[n] for n in self.frozen_names]
        self.buffer_names = [n for n, _ in model.named_buffers()]
        # Buffers the forward updates (results after the states).
        self.mutated_buffers = [n for n in self.buffer_names if n in mutated]
        self.opt = _Optimizer(optimizer, self.params)
        self.num_states = [len(self.opt.state_names(i))
                           for i in range(len(self.params))]
        self.num_inputs = num_inputs
        self.batch_dims = list(batch_dims or [0] * num_inputs)
        # The random draws of the forward (_philox): the step then takes the
        # samples' indices in the batch and a seed after the inputs.
        self.layouts = list(layouts)
        self.batch = None
        self.metrics = Metrics()  # loss_fn's metrics beside the loss
        self.guards = []  # branches on sizes of selections (_guards)

    def num_random_args(self):
        return 2 if self.layouts else 0

    def arg_count(self):
        return (len(self.params) + len(self.frozen) + len(self.buffer_names)
                + sum(self.num_states) + self.opt.num_hyper() +
                self.num_inputs + self.num_random_args())

    def batch_args(self):
        """(argument, dimension) of the per-sample arguments: the inputs,
        and the samples' indices when the step draws random numbers."""
        first = self.arg_count() - self.num_inputs - self.num_random_args()
        args = [(first + i, d) for i, d in enumerate(self.batch_dims)]
        if self.layouts:
            args.append((first + self.num_inputs, 0))
        return args
