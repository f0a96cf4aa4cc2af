"""What every rank of the sharded-parameter tests runs (under
`python -m torch.distributed.run --standalone --nproc_per_node=K`, gloo).

    fsdp_worker.py CASE... --shards 5,3 [--micro-batches 2]

Each case (mlp: AdamW; lm: token-mean cross-entropy with padding, SGD with
momentum; dp_worker's models and data) compiles the step with
shard="parameters" inside the default process group and runs two steps on
the rank's shard of the global batch. The oracle is PyTorch's own
single-process step on the whole batch (dp_worker.reference). Each rank
prints: the normwise relative error of the gathered parameters
(step.full_state_dict()) and of the losses; whether the gathered parameters
equal rank 0's bit for bit; whether every parameter holds exactly this
rank's rows of it (the whole shape's rows [r D / W, (r + 1) D / W)) and
equals those rows of the gathered one; the all-gathers and reduce-scatters
counted per step by the collective layer, with their bytes and the bytes
this rank sends, against the plan's prediction (step.shard_plan()); and the
bytes this rank hands gloo in them, counted where torch.distributed is
called (GlooBytes), against the plan's bytes sent plus gloo's padding of
unequal parts.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_worker import (CASES, TOLERANCE, compare, local_rows,  # noqa: E402
                       leave, say, sharded_case, verdict,
                       worker_arguments)

from ga_mlir.torch import compile_train_step  # noqa: E402


def rows_of(total, world, rank):
    return rank * total // world, (rank + 1) * total // world


class GlooBytes:
    """The bytes this rank hands gloo in the sharded collectives, counted
    where torch.distributed is called (independently of the step's own
    counter): a reduce-scatter sends the other ranks' parts of its input,
    an all-gather its part, padded to the largest (gloo gathers equal parts
    only), to every other rank."""

    def __init__(self, world, rank):
        self.sent = 0
        for name in ("reduce_scatter", "all_gather_into_tensor"):
            self._wrap(name, world, rank)

    def _wrap(self, name, world, rank):
        original = getattr(dist, name)

        def counted(output, input, *args, **kwargs):
            if name == "reduce_scatter":
                self.sent += sum(t.nbytes for t in input) - input[rank].nbytes
            else:
                self.sent += input.nbytes * (world - 1)
            return original(output, input, *args, **kwargs)
        setattr(dist, name, counted)


GLOO = None  # main's GlooBytes


def gloo_padding(plan, shapes, itemsizes, world, rank):
    """The bytes gloo's padding adds to what the plan says this rank sends:
    per all-gather of a parameter whose rows do not split evenly, the rows
    its part lacks of the largest, to each other rank."""
    padding = 0
    for pname, row in plan["parameters"].items():
        shape = shapes[pname]
        if not shape:
            continue
        per_row = itemsizes[pname] * (torch.Size(shape).numel() // shape[0])
        longest = max(e - b for b, e in (rows_of(shape[0], world, r)
                                         for r in range(world)))
        b, e = rows_of(shape[0], world, rank)
        padding += row["all_gathers"] * (longest - (e - b)) * per_row * \
            (world - 1)
    return padding


def run_case(name, shards, rank, micro_batches, steps=2):
    world = dist.get_world_size()
    model, make_opt, loss_fn, max_norm, ref_model, _, ref_losses, local = \
        sharded_case(name, shards, rank, steps)
    opt = make_opt(model)
    whole_shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    step = compile_train_step(model, loss_fn, opt, local,
                              micro_batches=micro_batches,
                              max_grad_norm=max_norm, shard="parameters")
    losses = [step(*local) for _ in range(steps - 1)]
    GLOO.sent = 0
    losses.append(step(*local))  # the step whose bytes are counted
    gloo_sent = GLOO.sent
    full = step.full_state_dict()
    err, loss_err, same = compare(
        [full[n] for n, _ in model.named_parameters()], ref_model, losses,
        ref_losses)
    # Each parameter holds this rank's rows of the whole one.
    held = True
    for n, p in model.named_parameters():
        shape = whole_shapes[n]
        if len(shape) == 0:
            held &= torch.equal(p.detach(), full[n])
            continue
        b, e = rows_of(shape[0], world, rank)
        held &= tuple(p.shape) == (e - b,) + shape[1:] and \
            torch.equal(p.detach(), full[n][b:e])
    counts = step._collectives.sharded_counts
    plan = step.shard_plan()
    gathers = sum(q["all_gathers"] for q in plan["parameters"].values())
    scatters = sum(q["reduce_scatters"] for q in plan["parameters"].values())
    measured = (counts["all_gather"][0], counts["reduce_scatter"][0],
                counts["all_gather"][1] + counts["reduce_scatter"][1],
                counts["all_gather"][2] + counts["reduce_scatter"][2])
    predicted = (gathers, scatters, plan["bytes"], plan["sent"])
    # What gloo was handed: the plan's bytes sent plus gloo's padding.
    itemsizes = {n: p.element_size() for n, p in model.named_parameters()}
    wire = gloo_sent == plan["sent"] + gloo_padding(
        plan, whole_shapes, itemsizes, world, rank)
    ok = err <= TOLERANCE and loss_err <= TOLERANCE and same and held and \
        measured == predicted and wire
    n = step.chosen_micro_batches()
    verdict(ok, f"rank {rank} {name} shards={','.join(map(str, shards))} "
            f"N={n}: params {err:.1e} loss {loss_err:.1e} same-as-rank-0 "
            f"{same} holds-its-rows {held} all-gathers/step {measured[0]} "
            f"(={measured[0] // n}N) reduce-scatters/step {measured[1]} "
            f"(={measured[1] // n}N) bytes {measured[2]} sent {measured[3]} "
            f"predicted {predicted[2]} {predicted[3]} gloo-sent {gloo_sent} "
            f"as-planned {wire}")
    for pname, row in sorted(plan["parameters"].items()):
        if rank == 0:
            say(f"plan {name} {pname}: gathered {row['gathered']}, "
                f"reduced {row['reduced']}, {row['all_gathers']} "
                f"all-gathers {row['reduce_scatters']} reduce-scatters "
                f"{row['bytes']} bytes")
    return ok


def checkpoint_case(name, shards, rank, directory, micro_batches):
    """Stop and resume through torch.distributed.checkpoint: a step saves
    its sharded state after one call (step.sharded_state_dict()) and makes
    a second; a new model (other initial values), optimizer and step load
    the checkpoint and make the second call: its loss, parameters and
    optimizer state equal the first step's bit for bit."""
    import torch.distributed.checkpoint as dcp
    total = sum(shards)
    model, make_opt, loss_fn, data, max_norm = CASES[name](total)
    local = local_rows(data, shards, rank)

    def compiled(model):
        opt = make_opt(model)
        return opt, compile_train_step(model, loss_fn, opt, local,
                                       micro_batches=micro_batches,
                                       max_grad_norm=max_norm,
                                       shard="parameters")
    opt, step = compiled(model)
    step(*local)
    directory = os.path.join(directory, name)  # one checkpoint a case
    dcp.save(step.sharded_state_dict(), checkpoint_id=directory)
    loss = step(*local)
    full = step.full_state_dict()
    other, _, _, _, _ = CASES[name](total)
    with torch.no_grad():
        for p in other.parameters():
            p.mul_(-0.5).add_(0.25)  # not the saved values
    opt2, step2 = compiled(other)
    state = step2.sharded_state_dict()
    dcp.load(state, checkpoint_id=directory)
    loss2 = step2(*local)
    full2 = step2.full_state_dict()
    same_params = all(torch.equal(full[n], full2[n]) for n in full)
    states = [(opt.state[p], opt2.state[q]) for p, q in
              zip(model.parameters(), other.parameters())]
    same_state = all(torch.equal(a[k], b[k]) for a, b in states for k in a
                     if torch.is_tensor(a[k]))
    same_loss = torch.equal(torch.as_tensor(loss), torch.as_tensor(loss2))
    sharded = sum(type(v).__name__ == "ShardedTensor"
                  for v in state.values())
    ok = same_params and same_state and same_loss and sharded > 0
    return verdict(ok, f"rank {rank} {name} resumed: loss {same_loss} "
                   f"parameters {same_params} optimizer-state {same_state} "
                   f"sharded-entries {sharded}/{len(state)}")


def main():
    parser = worker_arguments("5,3")
    parser.add_argument("--micro-batches", type=int, default=2)
    parser.add_argument("--checkpoint", default=None,
                        help="a directory: the stop-and-resume test")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    global GLOO
    GLOO = GlooBytes(dist.get_world_size(), rank)
    shards = [int(s) for s in args.shards.split(",")]
    if args.checkpoint:
        ok = all([checkpoint_case(c, shards, rank, args.checkpoint,
                                  args.micro_batches) for c in args.cases])
        leave(ok)
    ok = all([run_case(c, shards, rank, args.micro_batches)
              for c in args.cases])
    leave(ok)


if __name__ == "__main__":
    main()
