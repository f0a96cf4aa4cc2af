# ===- measure.py - what the kit measures on the GPU -------------------===#
#
# For run_kit.py and budget_sweep.py: the zoo's rule for a model's state
# against PyTorch's, and a step's device memory (torch's allocator and the
# driver's pool our runtime allocates from). Needs torch only.
#
# ===----------------------------------------------------------------------===#

import ctypes


def check_params(model, ref, lr=1e-3):
    """(max |diff|, fraction of elements off by more than 1e-4 + 1e-3 |ref|)
    of the model's state against `ref`. AdamW's first step moves every
    weight by about lr, in the direction of its gradient's sign, so a
    gradient that is ~0 may round to the other sign: a few elements may
    differ by up to 2 lr; no more."""
    worst, off, total = 0.0, 0, 0
    for k, v in model.state_dict().items():
        r = ref[k].to(v.device, v.dtype)
        d = (v - r).abs()
        worst = max(worst, d.max().item())
        off += (d > 1e-4 + 1e-3 * r.abs()).sum().item()
        total += d.numel()
    return worst, off / max(total, 1)


# CUmemPool_attribute (cuda.h): the bytes of a pool's allocations in use, and
# their high-water mark since it was last reset.
_POOL_USED_MEM_CURRENT, _POOL_USED_MEM_HIGH = 7, 8


def _driver_pool():
    """(libcuda, the current device's default memory pool), through which
    our runtime allocates a step's buffers (cuMemAllocAsync), or None."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        device, pool = ctypes.c_int(), ctypes.c_void_p()
        if cuda.cuCtxGetDevice(ctypes.byref(device)) != 0 or \
                cuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool),
                                               device) != 0:
            return None
        return cuda, pool
    except (OSError, AttributeError):
        return None


def release(torch):
    """Frees what earlier rows left (torch.compile's code cache holds its
    model's parameters), so that torch's allocator peak around a step is the
    step's own arguments."""
    import gc
    torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()


def device_peak(fn, torch):
    """What one call of fn holds on the device at its peak, measured: the
    peak of torch's allocator (the step's arguments: parameters, optimizer
    state, batch) and the high-water mark of the driver's default pool (the
    step's own buffers, which our runtime allocates there), or None for the
    second when the driver does not say. The cuBLASLt workspace is one
    cuMemAlloc outside both; its size is in the prediction's `workspaces`."""
    found = _driver_pool()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    if found:
        cuda, pool = found
        zero = ctypes.c_uint64(0)
        if cuda.cuMemPoolSetAttribute(pool, _POOL_USED_MEM_HIGH,
                                      ctypes.byref(zero)) != 0:
            found = None
    fn()
    torch.cuda.synchronize()
    high = None
    if found:
        value = ctypes.c_uint64()
        if cuda.cuMemPoolGetAttribute(pool, _POOL_USED_MEM_HIGH,
                                      ctypes.byref(value)) == 0:
            high = value.value
    return torch.cuda.max_memory_allocated(), high
