"""The shards of a data-parallel step's global batch, below the compiled
(_distributed, _fsdp) and the loaded (_dp_saved) data-parallel steps: the
process group a step trains over, the exchange of the ranks' batch sizes
and signatures (one all_gather), and a rank's inputs as the global
arguments its library reads rows [begin, end) of."""

import ctypes
import hashlib
import json

import torch

from ._common import CompileError

_DEFAULT = object()  # process_group not given: the default group if any

def _dist():
    import torch.distributed as dist
    return dist


def resolve_group(process_group):
    """The process group a step trains over, or None (one process):
    `process_group` not given means the default group when one is
    initialized; None opts out."""
    if process_group is None:
        return None
    dist = _dist()
    initialized = dist.is_available() and dist.is_initialized()
    if process_group is _DEFAULT:
        return dist.group.WORLD if initialized else None
    if not initialized:
        raise CompileError("process_group was given, but torch.distributed "
                           "has no initialized process group",
                           code="process-group-mismatch")
    return process_group


def _plain(value):
    """`value` as JSON-able data for the signature."""
    if isinstance(value, torch.Tensor):
        return ["tensor", list(value.shape), str(value.dtype),
                value.tolist() if value.numel() == 1 else None]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return f"<{type(value).__name__}>"


def _first_difference(a, b, path=""):
    """The first key path at which the JSON-able values `a` and `b` differ,
    with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key),
                                         f"{path}.{key}" if path else key)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) \
            and path in ("parameters", "buffers", "inputs"):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"{path}[{i}]", x, y
    return path, a, b


def _exchange_device(group):
    """Where the exchange's tensors live: NCCL takes CUDA tensors only."""
    return torch.device("cuda", torch.cuda.current_device()) \
        if _dist().get_backend(group) == "nccl" else torch.device("cpu")


def exchange_shards(group, inputs, batch_dims, signature, micro_batches):
    """The batch sizes and signatures of all ranks of `group` (one
    all_gather; a second, of the signatures, only when they differ):
    (begin, end, global batch size) of this rank's shard, or CompileError
    on every rank naming the first difference, an empty rank, or a rank
    with fewer samples than `micro_batches` (None: not checked)."""
    sizes = {t.shape[d] for t, d in zip(inputs, batch_dims)}
    if len(sizes) != 1:
        raise CompileError(f"inputs disagree on the batch size: {sizes}",
                           code="inputs-batch-disagree")
    size = sizes.pop()
    digest = hashlib.sha256(json.dumps(signature, sort_keys=True)
                            .encode()).digest()
    words = [int.from_bytes(digest[i:i + 7], "little") for i in (0, 7)]
    dist = _dist()
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    mine = torch.tensor([size] + words, dtype=torch.int64,
                        device=_exchange_device(group))
    everyone = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(everyone, mine, group=group)
    everyone = [e.cpu() for e in everyone]
    if any(not torch.equal(e[1:], everyone[rank][1:]) for e in everyone):
        described = [None] * world
        dist.all_gather_object(described, signature, group=group)
        other = next(r for r, e in enumerate(everyone)
                     if not torch.equal(e[1:], everyone[0][1:]))
        where, a, b = _first_difference(described[0], described[other])
        raise CompileError(
            f"the ranks of the data-parallel step were compiled "
            f"differently: {where} is {json.dumps(a)} on rank 0 but "
            f"{json.dumps(b)} on rank {other} (every rank must compile "
            "the same step: same model, optimizer, options and input "
            "shapes except the batch size)",
            code="ranks-disagree")
    batch_sizes = [int(e[0]) for e in everyone]
    empty = [r for r, s in enumerate(batch_sizes) if s < 1]
    if empty:
        raise CompileError(f"ranks {empty} have no sample: every rank "
                           "needs at least one sample per step",
                           code="too-few-samples")
    if micro_batches is not None:
        # Raised on every rank, not only on the one that is short.
        short = [r for r, s in enumerate(batch_sizes) if s < micro_batches]
        if short:
            raise CompileError(
                f"micro_batches={micro_batches} but ranks {short} "
                f"hold fewer samples ({[batch_sizes[r] for r in short]})"
                ": every rank runs N micro-batches of its shard",
                code="too-few-samples")
    begin = sum(batch_sizes[:rank])
    return begin, begin + size, sum(batch_sizes)


def global_shape(t, d, total):
    shape = list(t.shape)
    shape[d] = total
    return tuple(shape)


def shard_arguments(shard, batch_dims, first, flat, descriptors):
    """The parameters of a data-parallel step's library (see
    CpuLibrary.run): the batch inputs (flat[first:]) as the global
    arguments the step reads rows [begin, end) of, and the two index
    arguments; and the tensors that must live until the call returns."""
    begin, end, total = shard
    keep = []
    for i, d in enumerate(batch_dims):
        t = flat[first + i]
        desc = descriptors[first + i]
        shift = begin * t.stride(d) * t.element_size()
        if d == 0 and shift <= t.data_ptr():
            # Row i of the global batch is row i - begin of the shard;
            # the step reads no other row.
            desc.allocated = desc.aligned = t.data_ptr() - shift
            desc.sizes[0] = total
        else:
            # Another batch dimension: the static strides of the global
            # type differ from the shard's, so the shard is copied into
            # its place in a global tensor.
            full = t.new_zeros(global_shape(t, d, total))
            full.narrow(d, begin, end - begin).copy_(t)
            keep.append(full)
            descriptors[first + i] = type(desc)()
            new = descriptors[first + i]
            new.allocated = new.aligned = full.data_ptr()
            new.offset = 0
            for k, (s, st) in enumerate(zip(full.shape, full.stride())):
                new.sizes[k] = s
                new.strides[k] = st
    return list(descriptors) + [ctypes.c_int64(begin),
                                ctypes.c_int64(end)], keep
