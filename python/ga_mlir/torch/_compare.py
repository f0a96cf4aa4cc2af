"""ga_mlir.torch.compare: micro-batch counts side by side on your own model.

    from ga_mlir.torch import compare
    report = compare(model, loss_fn, optimizer, batches,
                     micro_batches=[1, 4, 16], steps=50, out="ga-report")

trains one copy of `model` (and of `optimizer`, with its state) per
configuration on the same batches, from the same parameters:

* "PyTorch": the full-batch baseline, PyTorch itself:
  `loss_fn(model, *batch).backward(); optimizer.step();
  optimizer.zero_grad()`;
* "GA N=n" for each n of `micro_batches`: `compile_train_step(...,
  micro_batches=n)`, one call per step.

and reports per configuration the loss at every step and its largest relative
difference from the baseline's, the time per step and throughput (samples/s,
median over the steps after the first), the static peak memory of the
compiled step (its `--ga-memory-report`: what the compiler knows before
running) and the measured peak of a step (the bytes of the parameters,
optimizer state and batch plus the peak growth of the heap during the call;
measured only when libGAHeapCount.so is preloaded, as `python -m
ga_mlir.train` does; else None). Compiling is not timed.

With `out`, it writes OUT/report.json, the plots OUT/loss.png (the curves
overlaid), OUT/throughput.png, OUT/memory.png and OUT/compare.png (the three
side by side), and TensorBoard event files under OUT/tensorboard/<config>
(`tensorboard --logdir OUT/tensorboard`): scalars loss,
loss_relative_difference, samples_per_s, memory/measured_bytes,
memory/static_bytes and metrics/<name> for each 0-d metric that loss_fn
returns beside the loss (`(loss, {"accuracy": ...})`; also in report.json, per
configuration, as "metrics": {name: [value per step]}). Progress bars (tqdm)
show the compiles (once they take more than two seconds) and the runs.
"""

import copy
import inspect
import json
import os
import re
import time

import torch

from .. import steplib
from .._plots import finish_n_axes, plot_peaks, save_figures
from ._metrics import scalar_metrics
from ._api import compile_train_step

__all__ = ["compare"]


def _copy_optimizer(model, optimizer, new_model):
    """`optimizer`'s class, settings and state, over `new_model`'s
    parameters (matched by name)."""
    names = {id(p): n for n, p in model.named_parameters()}
    params = dict(new_model.named_parameters())
    groups = []
    for group in optimizer.param_groups:
        missing = [p for p in group["params"] if id(p) not in names]
        if missing:
            raise ValueError("compare: the optimizer updates tensors that "
                             "are not parameters of the model")
        settings = {k: v for k, v in group.items() if k != "params"}
        groups.append(dict(settings, params=[params[names[id(p)]]
                                             for p in group["params"]]))
    accepted = inspect.signature(type(optimizer)).parameters
    defaults = {k: v for k, v in optimizer.defaults.items() if k in accepted}
    new = type(optimizer)(groups, **defaults)
    new.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    return new


def _state_bytes(model, optimizer):
    total = sum(p.nbytes for p in model.parameters())
    for state in optimizer.state.values():
        total += sum(t.nbytes for t in state.values()
                     if isinstance(t, torch.Tensor))
    return total


def _as_batch(batch):
    batch = tuple(batch) if isinstance(batch, (tuple, list)) else (batch,)
    for t in batch:
        if not isinstance(t, torch.Tensor):
            raise TypeError("compare: every batch must be a tuple of tensors "
                            f"(the inputs of loss_fn), got {type(t).__name__}")
    return batch


def _check(micro_batches, steps):
    if isinstance(micro_batches, int):
        micro_batches = [micro_batches]
    ns = list(micro_batches)
    for n in ns:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError("compare: micro_batches must be ints, got "
                            f"{type(n).__name__} {n!r}")
        if n < 1:
            raise ValueError(f"compare: micro_batches must be at least 1, "
                             f"got {n}")
    if not ns:
        raise ValueError("compare: micro_batches is empty")
    if steps is not None and (isinstance(steps, bool) or
                              not isinstance(steps, int) or steps < 1):
        raise ValueError(f"compare: steps must be an int >= 1, got {steps!r}")
    return ns


class _Run:
    """One configuration: a copy of the model and optimizer and its step."""

    def __init__(self, name, n, model, loss_fn, optimizer):
        self.name, self.n = name, n
        self.model = copy.deepcopy(model)
        self.optimizer = _copy_optimizer(model, optimizer, self.model)
        self.loss_fn = loss_fn
        self.step = None  # the compiled step (None: PyTorch eager)
        self.losses, self.seconds, self.measured = [], [], []
        # The 0-d metrics loss_fn returns beside the loss, per step.
        self.metrics = {}
        self.static = None

    def call(self, batch):
        if self.step is not None:
            result = self.step(*batch)
        else:
            result = self.loss_fn(self.model, *batch)
            loss = result[0] if isinstance(result, (tuple, list)) else result
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
        if isinstance(result, (tuple, list)):  # (loss, metrics)
            for name, value in scalar_metrics(result[1]).items():
                self.metrics.setdefault(name, []).append(value)
            result = result[0]
        return float(result.detach())


def compare(model, loss_fn, optimizer, batches, micro_batches=(1, 4, 16),
            steps=None, out=None, baseline=True, progress=True,
            tensorboard=True, plots=True, **compile_options):
    """Trains a copy of `model` per configuration on `batches` and returns
    the report (a dict; see the module's documentation).

    model, loss_fn, optimizer: as for compile_train_step (`loss_fn(model,
        *inputs)` is the loss of a whole batch). They are not modified:
        every configuration trains its own deep copy, from the same
        parameters and optimizer state.
    batches: the batches, each a tuple of the inputs of loss_fn (a list, a
        DataLoader, any iterable); the first `steps` are used by every
        configuration.
    micro_batches: the numbers of micro-batches N to compare.
    steps: optimizer steps per configuration (default: every batch).
    out: folder for report.json, the PNG plots and the TensorBoard event
        files (None: write nothing).
    baseline: also run PyTorch's own full-batch step (default True).
    compile_options: more arguments of compile_train_step (e.g.
        `max_grad_norm`, `batch_dims`, `blas`); `static_temporaries`
        defaults to False here so that the measured heap sees every
        temporary.
    """
    ns = _check(micro_batches, steps)
    if not isinstance(model, torch.nn.Module):
        raise TypeError("compare: model must be a torch.nn.Module, got "
                        f"{type(model).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError("compare: optimizer must be a torch.optim.Optimizer, "
                        f"got {type(optimizer).__name__}")
    data = []
    for batch in batches:
        if steps is not None and len(data) == steps:
            break
        data.append(_as_batch(batch))
    if not data:
        raise ValueError("compare: no batch")
    if steps is not None and len(data) < steps:
        raise ValueError(f"compare: steps={steps} but only {len(data)} "
                         "batches")
    options = dict(static_temporaries=False, **compile_options)
    dims = options.get("batch_dims") or [0] * len(data[0])
    batch_size = data[0][0].shape[dims[0]]

    from tqdm import tqdm
    runs = ([_Run("PyTorch", None, model, loss_fn, optimizer)]
            if baseline else [])
    compiled = [_Run(f"GA N={n}", n, model, loss_fn, optimizer) for n in ns]
    # Compiles can take seconds each: a bar once they take more than 2 s.
    for run in tqdm(compiled, desc="compiling", unit="step", delay=2,
                    disable=not progress):
        run.step = compile_train_step(run.model, loss_fn, run.optimizer,
                                      example_inputs=data[0],
                                      micro_batches=run.n, **options)
        run.static = run.step.memory_report()["total_peak"]
    runs += compiled

    counter = steplib.HeapCounter()
    bar = tqdm(total=len(runs) * len(data), desc="training", unit="step",
               disable=not progress)
    for run in runs:
        for batch in data:
            before_bytes = _state_bytes(run.model, run.optimizer) + sum(
                t.nbytes for t in batch)
            counter.reset_peak()
            live = counter.live()
            start = time.perf_counter()
            loss = run.call(batch)
            run.seconds.append(time.perf_counter() - start)
            peak = counter.peak()
            run.measured.append(before_bytes + peak - live
                                if counter.active else None)
            run.losses.append(loss)
            bar.set_postfix_str(f"{run.name} loss {loss:.4g}")
            bar.update()
    bar.close()
    report = _report(runs, batch_size, counter.active)
    if out is not None:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "report.json"), "w") as f:
            json.dump(report, f, indent=1)
        if plots:
            plot(report, out)
        if tensorboard:
            write_tensorboard(report, os.path.join(out, "tensorboard"))
    return report


def _median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] +
                                                      values[mid])


def _report(runs, batch_size, measured):
    reference = runs[0].losses
    configurations = []
    for run in runs:
        # The first step also allocates what later steps reuse (optimizer
        # state, BLAS buffers): steady state from the second step on.
        steady = run.seconds[1:] or run.seconds
        seconds = _median(steady)
        peaks = [m for m in (run.measured[1:] or run.measured)
                 if m is not None]
        difference = max(abs(a - b) / max(abs(b), 1e-30)
                         for a, b in zip(run.losses, reference))
        configurations.append({
            "name": run.name, "micro_batches": run.n,
            "kind": "pytorch" if run.step is None else "ga",
            "loss": run.losses, "seconds_per_step": run.seconds,
            "median_seconds_per_step": seconds,
            "samples_per_s": batch_size / seconds,
            "static_peak_bytes": run.static,
            "measured_peak_bytes": max(peaks) if peaks else None,
            "max_relative_loss_difference": difference,
            "metrics": run.metrics})
    return {"batch_size": int(batch_size), "steps": len(reference),
            "baseline": runs[0].name, "measured": measured,
            "configurations": configurations}


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def write_tensorboard(report, log_dir):
    """One TensorBoard run per configuration under `log_dir`."""
    from torch.utils.tensorboard import SummaryWriter
    reference = report["configurations"][0]["loss"]
    for c in report["configurations"]:
        with SummaryWriter(os.path.join(log_dir, _safe(c["name"]))) as w:
            for k, (loss, seconds, ref) in enumerate(
                    zip(c["loss"], c["seconds_per_step"], reference), 1):
                w.add_scalar("loss", loss, k)
                w.add_scalar("loss_relative_difference",
                             abs(loss - ref) / max(abs(ref), 1e-30), k)
                w.add_scalar("samples_per_s", report["batch_size"] / seconds,
                             k)
            for name, values in c.get("metrics", {}).items():
                for k, value in enumerate(values, 1):
                    w.add_scalar(f"metrics/{name}", value, k)
            if c["measured_peak_bytes"] is not None:
                w.add_scalar("memory/measured_bytes",
                             c["measured_peak_bytes"], c["micro_batches"] or 1)
            if c["static_peak_bytes"] is not None:
                w.add_scalar("memory/static_bytes", c["static_peak_bytes"],
                             c["micro_batches"] or 1)


def plot(report, out_dir):
    """loss.png, throughput.png, memory.png and compare.png in `out_dir`."""
    import matplotlib
    matplotlib.use("Agg")

    configs = report["configurations"]
    ga = [c for c in configs if c["kind"] == "ga"]
    base = configs[0]
    ns = [c["micro_batches"] for c in ga]

    def loss_axes(ax):
        for c in configs:
            style = dict(lw=3, alpha=0.35) if c is base else dict(lw=1,
                                                                  ls="--")
            ax.plot(range(1, len(c["loss"]) + 1), c["loss"], label=c["name"],
                    **style)
        worst = max(c["max_relative_loss_difference"] for c in ga)
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("training loss")
        ax.set_title(f"B = {report['batch_size']}: vs {base['name']} "
                     f"(max relative difference {worst:.1e})", fontsize=9)
        ax.legend(fontsize=7)

    def throughput_axes(ax):
        ax.plot(ns, [c["samples_per_s"] for c in ga], "o-", label="GA-N")
        if base["kind"] == "pytorch":
            ax.axhline(base["samples_per_s"], color="k", ls=":",
                       label="PyTorch full batch")
        finish_n_axes(ax, "samples/s (median)", "throughput")

    def memory_axes(ax):
        plot_peaks(ax, ns, ga, "static (--ga-memory-report)")
        if base["kind"] == "pytorch" and base["measured_peak_bytes"]:
            ax.axhline(base["measured_peak_bytes"] / 1024, color="k", ls=":",
                       label="PyTorch full batch (measured)")
        finish_n_axes(ax, "peak memory of a step (KiB)", "memory per N")

    save_figures(out_dir, (("loss", loss_axes), ("throughput", throughput_axes),
                           ("memory", memory_axes)), "compare.png")
