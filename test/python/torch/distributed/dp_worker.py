"""What every rank of the data-parallel tests runs (under
`python -m torch.distributed.run --standalone --nproc_per_node=K`, gloo).

    dp_worker.py CASE... [--shards 5,3] [--shard-optimizer]

Each case builds the same model, optimizer and global batch on every rank
(fixed seeds), gives rank r the rows of its (uneven) shard, compiles the
step with compile_train_step inside the default process group and runs two
steps. The oracle is PyTorch's own single-process step on the whole global
batch (loss.backward(), clip_grad_norm_, optimizer.step()), run on every
rank: each rank prints the normwise relative error of its parameters and
loss against it, and whether its parameters equal rank 0's bit for bit.
With --shard-optimizer (ZeRO-1) it also prints how many elements of the
optimizer state this rank holds, of how many in all (every rank's rows
together must be the whole state, each rank's its own rows only).

Cases: mlp (AdamW, cross-entropy), lm (token-mean cross-entropy with
padding, ignore_index, SGD with momentum), clip (SGD with momentum,
max_grad_norm), moe (transformers' Mixtral with its batch-level
load-balancing loss, SGD with momentum), memory (the memory report's optimizer_state with and
without shard_optimizer: see memory()),
save-dp / load-dp (--dir DIR: saved data-parallel steps, see
save_dp() and load_dp()), load-outside (the saved step loaded without a
process group: a CompileError),
save (a ZeRO-1 step: step.save refused), mismatch (rank 1 compiles a
wider model: a CompileError naming the difference on every rank), short (rank 1 holds fewer samples than
micro-batches: a CompileError on every rank), dead (rank 1 exits before
the step: rank 0's step fails after the process group's timeout).
"""
import argparse
import copy
import datetime
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import CompileError, compile_train_step, load_step

# The PyTorch tests' helpers (test/python/torch/zoo.py).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
import zoo  # noqa: E402

TOLERANCE = 2e-5


class MLP(nn.Module):
    def __init__(self, d_in=10, hidden=16, classes=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


class TinyLM(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(torch.tanh(self.mix(self.embed(tokens))))


def say(line):
    """Prints `line` with one write of line and newline: the ranks share one
    pipe, and print's separate writes of the text and its end (unbuffered
    under torchrun) interleave with the other ranks' lines."""
    os.write(1, (line + "\n").encode())


def verdict(ok, line):
    """Says `line` and then OK or FAIL as `ok` says; returns `ok`."""
    say(f"{line} {'OK' if ok else 'FAIL'}")
    return ok


def worker_arguments(shards):
    """The arguments every worker takes: the cases it runs and the samples of
    each rank, comma-separated (`shards` by default)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="+")
    parser.add_argument("--shards", default=shards)
    return parser


def classification_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def token_mean_loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1), ignore_index=-100)


def mlp_case(batch, hidden=16):
    torch.manual_seed(0)
    model = MLP(hidden=hidden)
    g = torch.Generator().manual_seed(1)
    data = (torch.randn(batch, 10, generator=g),
            torch.randint(0, 4, (batch,), generator=g))
    opt = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2,
                                      weight_decay=0.05)
    return model, opt, classification_loss, data, None


def lm_case(batch):
    torch.manual_seed(0)
    model = TinyLM()
    g = torch.Generator().manual_seed(2)
    tokens = torch.randint(0, 11, (batch, 6), generator=g)
    targets = torch.randint(0, 11, (batch, 6), generator=g)
    # Padding: sample i keeps its first 1 + (i * 7) % 6 targets, so the
    # ranks' shards hold very different numbers of tokens.
    for i in range(batch):
        targets[i, 1 + (i * 7) % 6:] = -100
    # SGD: Adam divides a near-zero gradient (the head's bias: the token
    # sum of softmax - one-hot nearly cancels) by its own magnitude, which
    # turns float32 rounding into a relative 1e-4 for any reordering, the
    # single-process compiled step included; a wrong normaliser would be
    # off by O(1) here.
    opt = lambda m: torch.optim.SGD(m.parameters(), lr=0.2, momentum=0.9,
                                    weight_decay=1e-3)
    return model, opt, token_mean_loss, (tokens, targets), None


def moe_case(batch):
    """transformers' Mixtral (moe_models.mixtral: one layer, 4 experts,
    top-2, its grouped-product experts) with output_router_logits: the
    batch-level load-balancing loss (coefficient 1) of the whole global
    batch, whose token fractions and mean router probabilities are means
    over every rank's tokens; padded text (model_zoo.padded_text), SGD with
    momentum (a lost or per-rank balance loss moves the router by the
    order of the learning rate)."""
    import model_zoo
    import moe_models
    model_zoo.quiet()
    torch.manual_seed(0)
    model = moe_models.mixtral(d=16, layers=1, router_logits=True,
                               router_aux_loss_coef=1.0)
    data = model_zoo.padded_text(torch.Generator().manual_seed(3), batch)
    opt = lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    return model, opt, model_zoo.hf_loss, data, None


def clip_case(batch):
    model, _, loss, data, _ = mlp_case(batch)
    opt = lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    return model, opt, loss, data, 0.05


CASES = {"mlp": mlp_case, "lm": lm_case, "clip": clip_case,
         "moe": moe_case}


def reference(model, make_opt, loss_fn, data, max_norm, steps):
    model = copy.deepcopy(model)
    opt = make_opt(model)
    losses = [zoo.pytorch_step(model, opt, loss_fn, data, max_norm)
              for _ in range(steps)]
    return model, opt, losses


def relative(a, b):
    a, b = a.detach(), b.detach()
    return (float((a.double() - b.double()).norm()) /
            max(float(b.double().norm()), 1e-30))


def state_elements(opt):
    return sum(t.numel() for state in opt.state.values()
               for t in state.values()
               if isinstance(t, torch.Tensor) and t.dim() > 0)


def compare(params, ref_model, losses, ref_losses):
    """(largest relative parameter error, largest relative loss error,
    whether every rank ends with rank 0's parameters bit for bit) of the
    whole parameters `params`, in ref_model.parameters()'s order."""
    params = list(params)
    err = max(relative(p, q) for p, q in zip(params,
                                            ref_model.parameters()))
    loss_err = max(relative(a, b) for a, b in zip(losses, ref_losses))
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    first = flat.clone()
    dist.broadcast(first, src=0)
    return err, loss_err, torch.equal(flat, first)


def local_rows(data, shards, rank):
    """This rank's rows of the global batch `data` split into `shards`."""
    begin = sum(shards[:rank])
    return tuple(t[begin:begin + shards[rank]].contiguous() for t in data)


def sharded_case(name, shards, rank, steps):
    """The case `name` on the global batch of sum(shards) samples: (model,
    make_opt, loss_fn, max_norm, PyTorch's reference after `steps` steps
    (model, optimizer, losses), this rank's rows of the batch)."""
    model, make_opt, loss_fn, data, max_norm = CASES[name](sum(shards))
    ref_model, ref_opt, ref_losses = reference(model, make_opt, loss_fn,
                                               data, max_norm, steps)
    return (model, make_opt, loss_fn, max_norm, ref_model, ref_opt,
            ref_losses, local_rows(data, shards, rank))


def run_case(name, shards, rank, steps=2, micro_batch_size=2,
             shard_optimizer=False):
    model, make_opt, loss_fn, max_norm, ref_model, ref_opt, ref_losses, \
        local = sharded_case(name, shards, rank, steps)
    opt = make_opt(model)
    step = compile_train_step(model, loss_fn, opt, local,
                              micro_batch_size=micro_batch_size,
                              max_grad_norm=max_norm,
                              shard_optimizer=shard_optimizer)
    losses = [step(*local) for _ in range(steps)]
    whole = state_elements(ref_opt)
    mine = torch.tensor([state_elements(opt)])
    everyone = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    total = sum(int(e) for e in everyone)
    state = f" state {int(mine)}/{whole}" if shard_optimizer else ""
    state_ok = total == whole and int(mine) < whole
    err, loss_err, same = compare(model.parameters(), ref_model, losses,
                                  ref_losses)
    ok = err <= TOLERANCE and loss_err <= TOLERANCE and same and \
        (state_ok or not shard_optimizer)
    count, nbytes = step.collectives_per_call()
    return verdict(ok, f"rank {rank} {name} "
                   f"shards={','.join(map(str, shards))} "
                   f"N={step.chosen_micro_batches()}: params {err:.1e} loss "
                   f"{loss_err:.1e} same-as-rank-0 {same} collectives/step "
                   f"{count}{state}")


def refused(rank, what, model, make_opt, loss_fn, local):
    """Whether compiling the step (N = 2) on this rank's `local` batch
    raises CompileError, as it must: says which, as `what`."""
    try:
        compile_train_step(model, loss_fn, make_opt(model), local,
                           micro_batches=2)
    except CompileError as error:
        say(f"rank {rank} {what}: CompileError: {error}")
        return True
    say(f"rank {rank} {what}: no error FAIL")
    return False


def mismatch(rank):
    model, make_opt, loss_fn, data, _ = mlp_case(8, hidden=16 + 4 * (
        rank == 1))
    return refused(rank, "mismatch", model, make_opt, loss_fn,
                   tuple(t[:4] for t in data))


def short(rank):
    model, make_opt, loss_fn, data, _ = mlp_case(5)
    return refused(rank, "short", model, make_opt, loss_fn,
                   tuple(t[:4] if rank == 0 else t[4:] for t in data))


def save(rank):
    """step.save of a ZeRO-1 step is refused: its library holds this rank's
    rows of every parameter (world size and rank baked in)."""
    model, make_opt, loss_fn, data, _ = mlp_case(8)
    local = tuple(t[4 * rank:4 * rank + 4] for t in data)
    step = compile_train_step(model, loss_fn, make_opt(model), local,
                              micro_batches=2, shard_optimizer=True)
    try:
        step.save(os.path.join(tempfile.mkdtemp(), "step"))
    except CompileError as error:
        say(f"rank {rank} save: CompileError: {str(error)[:90]}")
        return True
    say(f"rank {rank} save: saved FAIL")
    return False


SAVED = ("mlp", "lm")  # the cases save_dp writes, 8 samples, N = 2


def save_dp(rank, directory):
    """Compiles the data-parallel steps of SAVED (global batch 8, N = 2)
    in this process group (any world size: the library does not depend on
    it) and saves them from rank 0 into directory/CASE; also a
    single-process step (process_group=None) into directory/alone."""
    world = dist.get_world_size()
    for name in SAVED:
        model, make_opt, loss_fn, data, max_norm = CASES[name](8)
        shards = [8 * (r + 1) // world - 8 * r // world
                  for r in range(world)]
        local = local_rows(data, shards, rank)
        step = compile_train_step(model, loss_fn, make_opt(model), local,
                                  micro_batches=2, max_grad_norm=max_norm)
        if rank == 0:
            step.save(os.path.join(directory, name))
    model, make_opt, loss_fn, data, _ = mlp_case(8)
    alone = compile_train_step(model, loss_fn, make_opt(model), data,
                               micro_batches=2, process_group=None)
    if rank == 0:
        alone.save(os.path.join(directory, "alone"))
    dist.barrier()
    say(f"rank {rank} save-dp: saved {' '.join(SAVED)} and alone")
    return True


def load_dp(shards, rank, directory, steps=2):
    """Loads each saved data-parallel step on every rank (load_step binds
    it to the default group) and runs two steps on this rank's shard: the
    parameters and losses against PyTorch's single-process step on the
    whole batch, as run_case. Then: shards that do not add up to the saved
    global batch, and the single-process step loaded inside the group
    without and with process_group=None."""
    ok = True
    for name in SAVED:
        model, make_opt, _, _, ref_model, _, ref_losses, local = \
            sharded_case(name, [8], 0, steps)
        local = local_rows(local, shards, rank)
        step = load_step(os.path.join(directory, name), model,
                         make_opt(model))
        losses = [step(*local) for _ in range(steps)]
        err, loss_err, same = compare(model.parameters(), ref_model, losses,
                                      ref_losses)
        good = err <= TOLERANCE and loss_err <= TOLERANCE and same
        count, _ = step.collectives_per_call()
        say(f"rank {rank} load-dp {name} shards={','.join(map(str, shards))}"
            f" {type(step).__name__}: params {err:.1e} loss {loss_err:.1e} "
            f"same-as-rank-0 {same} collectives/step {count} "
            f"{'OK' if good else 'FAIL'}")
        ok &= good
        try:
            # Every rank one sample short (the ranks exchange their sizes
            # when their shapes change, all together).
            step(*(t[:-1] for t in local))
            say(f"rank {rank} load-dp: wrong global batch ran FAIL")
            ok = False
        except CompileError as error:
            say(f"rank {rank} load-dp {name}: CompileError: {error}")
    model, make_opt, _, data, _ = mlp_case(8)
    try:
        load_step(os.path.join(directory, "alone"), model, make_opt(model))
        say(f"rank {rank} load-dp alone: loaded FAIL")
        ok = False
    except CompileError as error:
        say(f"rank {rank} load-dp alone: CompileError: {str(error)[:100]}")
    alone = load_step(os.path.join(directory, "alone"), model,
                      make_opt(model), process_group=None)
    alone(*data)
    say(f"rank {rank} load-dp alone, process_group=None: "
        f"{type(alone).__name__} trained this rank alone")
    return ok


def load_outside(directory):
    """A saved data-parallel step loaded without a process group."""
    model, make_opt, _, _, _ = mlp_case(8)
    try:
        load_step(os.path.join(directory, "mlp"), model, make_opt(model))
        say("load-outside: loaded FAIL")
        return False
    except CompileError as error:
        say(f"load-outside: CompileError: {error}")
        return True


def dead(rank):
    model, make_opt, loss_fn, data, _ = mlp_case(8)
    local = tuple(t[4 * rank:4 * rank + 4] for t in data)
    step = compile_train_step(model, loss_fn, make_opt(model), local,
                              micro_batches=2)
    if rank == 1:
        os._exit(0)  # dies without a word to the others
    try:
        step(*local)
    except RuntimeError as error:
        say(f"rank {rank} dead: RuntimeError: "
            f"{str(error).splitlines()[0][:160]}")
        os._exit(0)
    say(f"rank {rank} dead: no error FAIL")
    os._exit(1)


def memory(shards, rank, world):
    """The memory report of the MLP's AdamW step (2 samples per
    micro-batch) on this rank's shard, unsharded and with
    shard_optimizer=True: the optimizer_state of the sharded step is
    smaller by exactly the bytes of the rows of the two moments that other
    ranks hold (rank r holds rows [r D / R, (r + 1) D / R) of each
    parameter of D rows)."""
    reports, steps = [], []
    for shard in (False, True):
        model, make_opt, loss_fn, data, _ = mlp_case(sum(shards))
        local = local_rows(data, shards, rank)
        step = compile_train_step(model, loss_fn, make_opt(model), local,
                                  micro_batch_size=2, shard_optimizer=shard)
        reports.append(step.memory_report())
        steps.append(step)
    whole = held = 0
    for p in model.parameters():
        rows = p.shape[0]
        per_row = p.numel() // rows
        mine = (rank + 1) * rows // world - rank * rows // world
        whole += 2 * p.numel() * p.element_size()
        held += 2 * mine * per_row * p.element_size()
    full, sharded = (r["optimizer_state"] for r in reports)
    ok = full - sharded == whole - held and held < whole
    return verdict(ok, f"rank {rank} memory: optimizer_state {full} "
                   f"unsharded, {sharded} sharded: {full - sharded} bytes "
                   f"fewer, the {whole - held} of the moments' rows other "
                   f"ranks hold")


def leave(ok):
    """Ends this rank with 0 if `ok`, else 1: every rank passes one barrier,
    then the process exits without tearing gloo or the store down
    (os._exit: no destructors). Tearing down while a peer still ran its last
    collective, or the interpreter's exit destroying the process group's
    threads, aborted ranks after every check had passed ("terminate called
    without an active exception": dp-world2, dp-world3 and fsdp-save-load in
    CI, one in three runs)."""
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if ok else 1)


def main():
    parser = worker_arguments(None)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--shard-optimizer", action="store_true")
    parser.add_argument("--dir")
    args = parser.parse_args()
    if args.cases == ["load-outside"]:
        sys.exit(0 if load_outside(args.dir) else 1)
    dist.init_process_group(
        "gloo", timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    shards = [int(s) for s in args.shards.split(",")] if args.shards \
        else [3 + r for r in range(world)]
    assert len(shards) == world
    ok = True
    for case in args.cases:
        if case == "mismatch":
            ok &= mismatch(rank)
        elif case == "short":
            ok &= short(rank)
        elif case == "save":
            ok &= save(rank)
        elif case == "save-dp":
            ok &= save_dp(rank, args.dir)
        elif case == "load-dp":
            ok &= load_dp(shards, rank, args.dir)
        elif case == "dead":
            dead(rank)
        elif case == "memory":
            ok &= memory(shards, rank, world)
        else:
            ok &= run_case(case, shards, rank,
                           shard_optimizer=args.shard_optimizer)
    leave(ok)


if __name__ == "__main__":
    main()
