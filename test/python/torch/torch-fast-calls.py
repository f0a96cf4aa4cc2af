# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A call whose model, optimizer and input shapes are unchanged reuses what the
# previous call laid out (ga_mlir/torch/_fastcall.py); anything that changes
# what the step reads must be seen. Between calls, each change below is made
# on the compiled step's model and optimizer and on a PyTorch copy; after
# every step the loss, parameters and optimizer states are compared with
# PyTorch's full-batch step, and which calls took the fast path is printed:
# a call after a change of what the step looks up must not (or the new
# tensors or groups went unseen), a call with nothing changed must. Changes: the learning rate set in param_groups,
# model.load_state_dict (values copied in place), optimizer.load_state_dict
# (new group dictionaries, here with another learning rate), the optimizer's
# state cleared, a state tensor replaced, a parameter's storage replaced
# (p.data = ...), another batch size and back. A storage of another dtype or
# shape, or a transposed one, is refused; so is an input that shares memory
# with a parameter.

import sys
import tempfile

import torch

import zoo
from ga_mlir.torch import compile_train_step, load_step
from ga_mlir.torch import _step
from ga_mlir.torch._call import check_no_shared_storage

failures = 0
slow = {"calls": 0}
_variant = _step.CompiledTrainStep._variant


def counting_variant(self, inputs):
    slow["calls"] += 1
    return _variant(self, inputs)


_step.CompiledTrainStep._variant = counting_variant


def scale_lr(model, opt, other):
    for g in opt.param_groups:
        g["lr"] *= 0.5


def load_model(model, opt, other):
    # The same new values on both sides (from the compiled step's model).
    model.load_state_dict(other)


def load_optimizer(model, opt, other):
    sd = opt.state_dict()
    sd["param_groups"][0]["lr"] *= 3.0
    opt.load_state_dict(sd)


def clear_state(model, opt, other):
    opt.state.clear()


def replace_state(model, opt, other):
    p = model.net[2].weight
    name = "momentum_buffer" if "momentum_buffer" in opt.state[p] else \
        "exp_avg"
    opt.state[p][name] = opt.state[p][name].clone()


def replace_storage(model, opt, other):
    p = model.net[0].weight
    p.data = p.data.clone()


CHANGES = [None, None, scale_lr, None, load_model, None, load_optimizer,
           None, clear_state, None, replace_state, None, replace_storage,
           None, "small batch", "batch", None]


def run(opt_name):
    global failures
    torch.manual_seed(1)
    model = zoo.MLP()
    ref = zoo.MLP()
    ref.load_state_dict(model.state_dict())
    opt = zoo.OPTIMIZERS[opt_name](model)
    ref_opt = zoo.OPTIMIZERS[opt_name](ref)
    gen = torch.Generator().manual_seed(2)
    step = compile_train_step(model, zoo.classification_loss, opt,
                              example_inputs=zoo.mlp_batch(gen),
                              micro_batches=2)
    paths, worst = [], 0.0
    for it, change in enumerate(CHANGES):
        batch = zoo.mlp_batch(gen, 6 if change == "small batch" else 10)
        if callable(change):
            other = {k: v * 0.9 + 0.01 for k, v in
                     model.state_dict().items()}
            change(model, opt, other)
            change(ref, ref_opt, other)
        before = slow["calls"]
        loss = step(*batch)
        paths.append("slow" if slow["calls"] > before else "fast")
        ref_loss = zoo.classification_loss(ref, *batch)
        ref_loss.backward()
        ref_opt.step()
        ref_opt.zero_grad()
        pairs = [(loss, ref_loss.detach())]
        for p, q in zip(model.parameters(), ref.parameters()):
            pairs.append((p.detach(), q.detach()))
            s, r = opt.state[p], ref_opt.state[q]
            if set(s) != set(r):
                print(f"{opt_name} step {it}: state keys {sorted(s)} != "
                      f"{sorted(r)} FAIL")
                failures += 1
            pairs += [(s[k], r[k]) for k in set(s) & set(r)]
        for a, b in pairs:
            err, ok = zoo.close(a.float(), b.float(), 2e-4, 2e-5)
            worst = max(worst, err)
            if not ok:
                what = getattr(change, "__name__", change)
                print(f"{opt_name} step {it} ({what}): differs by "
                      f"{err:.3g} FAIL")
                failures += 1
                return
    print(f"{opt_name}: {' '.join(paths)}; max |err| {worst:.2g}")


# The first call takes the slow path, and so does every call after a change
# of what the step looks up (new group dictionaries, a cleared or replaced
# state, a new storage, other shapes: "batch" is back to the first shapes
# after the small batch). A new learning rate and values copied into the
# parameters are read by the fast path itself.
# CHECK: sgd: slow fast fast fast fast fast slow fast slow fast slow fast slow fast slow slow fast; max |err|
# CHECK: adamw: slow fast fast fast fast fast slow fast slow fast slow fast slow fast slow slow fast; max |err|
run("sgd")
run("adamw")

# A storage of another dtype or shape under the same parameter, or the
# same memory transposed: refused, on a call that would otherwise take the
# fast path.
def fast_step(optimizer):
    """The seeded MLP with `optimizer`, its batch, and its step (N = 2)
    after two calls, the second of which took the fast path."""
    torch.manual_seed(1)
    model = zoo.MLP()
    opt = zoo.OPTIMIZERS[optimizer](model)
    batch = zoo.mlp_batch(torch.Generator().manual_seed(2))
    step = compile_train_step(model, zoo.classification_loss, opt, batch,
                              micro_batches=2)
    step(*batch)
    step(*batch)
    return model, batch, step


# CHECK: dtype: parameter 'net.0.weight' is now [24, 12] torch.float64; the step was compiled for [24, 12] torch.float32
# CHECK: shape: parameter 'net.0.weight' is now [24, 6] torch.float32; the step was compiled for [24, 12] torch.float32
# CHECK: strides: parameters, buffers and optimizer states must be contiguous
for what, layer, new in (("dtype", 0, lambda w: w.double()),
                         ("shape", 0, lambda w: w[:, :6].contiguous()),
                         ("strides", 2, lambda w: w.t())):
    model, batch, step = fast_step("adamw")
    model.net[layer].weight.data = new(model.net[layer].weight.data)
    failures += zoo.call_refused(what, lambda: step(*batch))

# An input that is a parameter's memory (written in place by the step),
# after calls that took the fast path.
model, batch, step = fast_step("sgd")
aliased = (model.net[0].weight.detach()[:10], batch[1])
# CHECK: aliased input: arguments 0 and {{[0-9]+}} of the step share memory, and one of them is updated in place
failures += zoo.call_refused("aliased input", lambda: step(*aliased))

# A saved step (load_step) takes the fast path too, and binds again to the
# model when it changed: here a parameter replaced by a new one (in the
# model and in the optimizer, on both sides) between calls.
torch.manual_seed(1)
model = zoo.MLP()
ref = zoo.MLP()
ref.load_state_dict(model.state_dict())
opt = zoo.OPTIMIZERS["sgd"](model)
ref_opt = zoo.OPTIMIZERS["sgd"](ref)
gen = torch.Generator().manual_seed(2)
batch = zoo.mlp_batch(gen)
compiled = compile_train_step(model, zoo.classification_loss, opt, batch,
                              micro_batches=2)
with tempfile.TemporaryDirectory() as saved:
    compiled.save(saved)
    step = load_step(saved, model, opt)
    errors, paths = [], []
    for it in range(4):
        if it == 2:
            for m, o in ((model, opt), (ref, ref_opt)):
                new = torch.nn.Parameter(m.net[4].weight.detach().clone())
                group = o.param_groups[0]["params"]
                group[[q is m.net[4].weight for q in group].index(True)] = new
                m.net[4].weight = new
        batch = zoo.mlp_batch(gen)
        before = getattr(step, "_plan", None)  # a slow call replaces it
        loss = step(*batch)
        paths.append("fast" if before is not None and
                     getattr(step, "_plan", None) is before
                     else "slow")
        ref_loss = zoo.classification_loss(ref, *batch)
        ref_loss.backward()
        ref_opt.step()
        ref_opt.zero_grad()
        errors.append(max([(loss - ref_loss).abs().item()] + [
            (p - q).abs().max().item()
            for p, q in zip(model.parameters(), ref.parameters())]))
worst = max(errors)
# CHECK: saved step, a parameter replaced at the third call: slow fast slow fast; max |err| {{.*}} OK
print(f"saved step, a parameter replaced at the third call: "
      f"{' '.join(paths)}; max |err| {worst:.2g} "
      f"{'OK' if worst < 1e-4 else 'FAIL'}")
failures += worst >= 1e-4

# The check itself finds a shared memory between arguments that are not
# neighbours in address order: an input over three parameters' memory, only
# the last of which is written.
memory = torch.zeros(100)
# CHECK: spanning input: arguments 1 and 2 of the step share memory
failures += zoo.call_refused("spanning input", lambda: check_no_shared_storage(
    [memory[10:20], memory[30:40], memory[0:100]], written=[1]))

sys.exit(1 if failures else 0)
