# RUN: rm -rf %t %t.cache && mkdir -p %t
# RUN: env PYTHONPATH=%ga_python_path GA_MLIR_CACHE_DIR=%t.cache %torch_python %s %t/api | FileCheck %s
#
# The command line on a user's model given by module path (a file written by
# this script), with the heap counter preloaded (the command re-executes
# itself): a table per configuration, the files, measured peaks.
# RUN: env PYTHONPATH=%ga_python_path %torch_python %s --write-model %t/user_model.py
# RUN: cd %t && env PYTHONPATH=%ga_python_path GA_MLIR_CACHE_DIR=%t.cache %torch_python -m ga_mlir.train \
# RUN:   --model user_model:build --arg hidden=8 --n 1,3 --steps 3 --out %t/cli --quiet --check-tolerance 1e-4 \
# RUN:   | FileCheck %s --check-prefix=CLI
# CLI: configuration {{ *}}final loss
# CLI: PyTorch
# CLI: GA N=1
# CLI: GA N=3
# CLI-NOT: FAIL
# RUN: %torch_python -c "import json, sys; r = json.load(open(sys.argv[1])); \
# RUN:   print(all(c['measured_peak_bytes'] > 0 for c in r['configurations']), r['measured'])" \
# RUN:   %t/cli/report.json | FileCheck %s --check-prefix=MEASURED
# MEASURED: True True
# A module path that does not resolve: one line, exit 1.
# RUN: cd %t && not env PYTHONPATH=%ga_python_path %torch_python -m ga_mlir.train --model no_such_module:build 2>&1 \
# RUN:   | FileCheck %s --check-prefix=BAD-MODEL
# BAD-MODEL: error: --model 'no_such_module:build': cannot import no_such_module
#
# ga_mlir.torch.compare trains copies of a small model side by side: PyTorch's
# full-batch step and compile_train_step for N = 1, 3, 4 (a remainder: 4 + 4
# + 4 of 12 is exact, 3 + 3 + 3 + 3 too), from the same parameters on the
# same batches. The loss curves must agree with PyTorch's, the static memory
# report must be there for every N, the plots must be PNG files and the
# TensorBoard event files must hold the reported losses. The model, loss and
# optimizer passed in are not modified. The trace is made once and reused
# for every N (the in-process trace cache), and a change that the trace bakes
# in (eval mode, a loss setting) is a new key.

import glob
import json
import os
import sys

import torch

USER_MODEL = '''
import torch

def build(hidden=16, steps=3):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, hidden), torch.nn.Tanh(),
                                torch.nn.Linear(hidden, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    def loss_fn(model, x, y):
        return torch.nn.functional.cross_entropy(model(x), y)

    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(12, 6, generator=g),
                torch.randint(0, 3, (12,), generator=g)) for _ in range(steps)]
    return model, loss_fn, optimizer, batches
'''

if sys.argv[1] == "--write-model":
    with open(sys.argv[2], "w") as f:
        f.write(USER_MODEL)
    sys.exit(0)

from ga_mlir.torch import compare, compile_train_step  # noqa: E402
from ga_mlir.torch import _cache  # noqa: E402

out = sys.argv[1]
namespace = {}
exec(USER_MODEL, namespace)
model, loss_fn, optimizer, batches = namespace["build"](hidden=16, steps=4)
before = [p.detach().clone() for p in model.parameters()]
report = compare(model, loss_fn, optimizer, batches, micro_batches=[1, 3, 4],
                 steps=4, out=out, progress=False)

# CHECK: configurations: PyTorch, GA N=1, GA N=3, GA N=4
print("configurations:", ", ".join(c["name"] for c in report["configurations"]))
# CHECK-NEXT: inputs unchanged: True
print("inputs unchanged:", all(torch.equal(a, b) for a, b in
                               zip(before, model.parameters())))
# CHECK-NEXT: traces: 1
print("traces:", len(_cache._TRACES))
base = report["configurations"][0]["loss"]
for c in report["configurations"][1:]:
    worst = max(abs(a - b) / abs(b) for a, b in zip(c["loss"], base))
    # CHECK-NEXT: GA N=1: 4 steps, loss within 1e-5: True, static peak: True, samples/s: True
    # CHECK-NEXT: GA N=3: 4 steps, loss within 1e-5: True, static peak: True, samples/s: True
    # CHECK-NEXT: GA N=4: 4 steps, loss within 1e-5: True, static peak: True, samples/s: True
    print(f"{c['name']}: {len(c['loss'])} steps, loss within 1e-5: "
          f"{worst < 1e-5 and worst == c['max_relative_loss_difference']}, "
          f"static peak: {c['static_peak_bytes'] > 0}, "
          f"samples/s: {c['samples_per_s'] > 0}")

# The losses really are trained ones: they change from step to step.
# CHECK-NEXT: training: True
print("training:", len(set(base)) == len(base))

# CHECK-NEXT: png: compare.png True
# CHECK-NEXT: png: loss.png True
# CHECK-NEXT: png: memory.png True
# CHECK-NEXT: png: throughput.png True
for name in sorted(glob.glob(os.path.join(out, "*.png"))):
    with open(name, "rb") as f:
        print("png:", os.path.basename(name), f.read(8) == b"\x89PNG\r\n\x1a\n")
# CHECK-NEXT: report.json: 4 configurations
with open(os.path.join(out, "report.json")) as f:
    print("report.json:", len(json.load(f)["configurations"]), "configurations")

from tensorboard.backend.event_processing.event_accumulator import \
    EventAccumulator  # noqa: E402

for c in report["configurations"]:
    events = glob.glob(os.path.join(out, "tensorboard", c["name"].replace(
        " ", "_").replace("=", "_"), "events.out.tfevents.*"))
    acc = EventAccumulator(os.path.dirname(events[0]))
    acc.Reload()
    logged = [e.value for e in acc.Scalars("loss")]
    # CHECK-NEXT: tensorboard PyTorch: 4 losses, as reported: True
    # CHECK-NEXT: tensorboard GA N=1: 4 losses, as reported: True
    # CHECK-NEXT: tensorboard GA N=3: 4 losses, as reported: True
    # CHECK-NEXT: tensorboard GA N=4: 4 losses, as reported: True
    print(f"tensorboard {c['name']}: {len(logged)} losses, as reported: "
          f"{all(abs(a - b) <= 1e-6 * abs(b) for a, b in zip(logged, c['loss']))}")

# The trace key: the same for a copy, another for what the trace bakes in.
import copy  # noqa: E402
import functools  # noqa: E402

inputs = batches[0]
options = (None, "one-hot", False)
key = _cache.trace_key(model, loss_fn, optimizer, inputs, *options)
twin = copy.deepcopy(model)
twin_opt = torch.optim.Adam(twin.parameters(), lr=0.5)
# CHECK-NEXT: copy, other lr: same key True
print("copy, other lr: same key",
      key == _cache.trace_key(twin, loss_fn, twin_opt, inputs,
                              *options))
twin.eval()
# CHECK-NEXT: eval mode: same key False
print("eval mode: same key",
      key == _cache.trace_key(twin, loss_fn, twin_opt, inputs,
                              *options))
smoothing = 0.0


def smoothed(model, x, y):
    return torch.nn.functional.cross_entropy(model(x), y,
                                             label_smoothing=smoothing)


first = _cache.trace_key(model, smoothed, optimizer, inputs, *options)
smoothing = 0.1
# CHECK-NEXT: a global the loss reads changed: same key False
print("a global the loss reads changed: same key",
      first == _cache.trace_key(model, smoothed, optimizer, inputs,
                                *options))
# CHECK-NEXT: other shapes: same key False
print("other shapes: same key",
      key == _cache.trace_key(model, loss_fn, optimizer,
                              tuple(t[:6] for t in inputs), *options))



# A module holding a configuration object (transformers' PretrainedConfig,
# a user's settings class) and a forward under a decorator whose wrapper
# holds itself, as transformers' layers are: a key, the configuration's
# state in it.
class Settings:
    def __init__(self):
        self.scale, self._kind = 2.0, "tanh"


def decorated(forward):
    @functools.wraps(forward)
    def wrapper(*args, **kwargs):
        return wrapper.__wrapped__(*args, **kwargs)
    return wrapper


class Configured(torch.nn.Module):
    def __init__(self, settings):
        super().__init__()
        self.config, self.linear = settings, torch.nn.Linear(4, 3)

    @decorated
    def forward(self, x):
        return getattr(torch, self.config._kind)(self.linear(x)) * \
            self.config.scale


settings = Settings()
configured = Configured(settings)
configured_opt = torch.optim.SGD(configured.parameters(), lr=0.1)
xs = (torch.randn(4, 4), torch.tensor([0, 1, 2, 0]))
first = _cache.trace_key(configured, loss_fn, configured_opt, xs, *options)
twin = copy.deepcopy(configured)
twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1)
# CHECK-NEXT: configured: a key True; same for a copy True
print(f"configured: a key {first is not None}; same for a copy",
      first == _cache.trace_key(twin, loss_fn, twin_opt, xs, *options))
settings._kind = "sigmoid"
# CHECK-NEXT: a configuration's private setting changed: same key False
print("a configuration's private setting changed: same key",
      first == _cache.trace_key(configured, loss_fn, configured_opt, xs,
                                *options))
# CHECK-NEXT: library cpu: True
print("library cpu:", _cache.library_cpu("native") != "native" and
      _cache.library_cpu("znver4") == "znver4")


# Bad arguments: TypeError or ValueError at the API boundary.
def refused(name, **kwargs):
    try:
        compile_train_step(model, loss_fn, optimizer, inputs, **kwargs)
    except (TypeError, ValueError) as error:
        print(f"{name}: {type(error).__name__}: {error}")


# CHECK-NEXT: zero: ValueError: compile_train_step: micro_batches must be at least 1, got 0
refused("zero", micro_batches=0)
# CHECK-NEXT: string: TypeError: compile_train_step: micro_batches must be an int, got str '4'
refused("string", micro_batches="4")
# CHECK-NEXT: float size: TypeError: compile_train_step: micro_batch_size must be an int, got float 2.5
refused("float size", micro_batch_size=2.5)
# CHECK-NEXT: none: TypeError: compile_train_step: pass one of micro_batches=, micro_batch_size= and max_memory=
refused("none")
# CHECK-NEXT: batch dim: ValueError: compile_train_step: batch_dims[0] = 2 is not a dimension of example_inputs[0] (shape (12, 6))
refused("batch dim", micro_batches=2, batch_dims=[2, 0])
try:
    compile_train_step(model, loss_fn, "sgd", inputs, micro_batches=2)
except TypeError as error:
    # CHECK-NEXT: optimizer: compile_train_step: optimizer must be a torch.optim.Optimizer, got str
    print("optimizer:", error)
try:
    compare(model, loss_fn, optimizer, batches, micro_batches=[2, 0])
except ValueError as error:
    # CHECK-NEXT: compare: compare: micro_batches must be at least 1, got 0
    print("compare:", error)
