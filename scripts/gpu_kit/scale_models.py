# ===- scale_models.py - the kit's scale models' figures (GPU machine) ----===#
#
# For run_kit.py: the reference step of a scale model (kit_models.SCALE),
# drawn on the GPU from the kit's seed; tokens/s and MFU against the GPU's
# dense bf16 peak; memory; the report's table. Needs torch only.
#
# ===----------------------------------------------------------------------===#


def reference(kit, name, n, fresh, torch, kit_models):
    """PyTorch's own step (bf16 autocast) of a scale model on this GPU,
    from the kit's seed: its loss and state (on the GPU). Accumulated over
    the same N micro-batches (each loss scaled by its share), the full
    batch's step in exact arithmetic: the whole batch at once (B = 128
    sequences at N = 16) would not fit PyTorch's eager activations.
    `fresh`: run_kit.fresh (drawing `kit`'s micro-batch size)."""
    model, loss_fn, opt, batch = fresh(kit, name, torch, kit_models, n)
    loss = kit_models.torch_accumulation_step(model, loss_fn, opt, batch, n)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return {"pytorch_loss": loss.item(), "pytorch": state}


# Dense bf16 peaks (FLOP/s) of the GPUs the kit meets, without sparsity.
BF16_PEAK = {"H200": 989e12, "H100": 989e12, "A100": 312e12}


def flops_per_step(model, batch):
    """Training FLOPs of a step: 6 per parameter per token (forward and
    backward products) plus attention's scores and weighted sums (6 * 2 *
    layers * d * T per token, halved for causal masks as FlashAttention
    counts), as MFU is usually reported."""
    ids = batch[0]
    tokens, t = ids.numel(), ids.shape[1]
    params = sum(p.numel() for p in model.parameters())
    blocks = getattr(model, "blocks", [])
    d = next(iter(model.parameters())).shape[-1]
    return tokens * (6 * params + 6 * len(blocks) * d * t)


def figures(row, model, batch, torch):
    """tokens/s, MFU and the step's FLOPs of each timed column of `row`."""
    flops = flops_per_step(model, batch)
    name = torch.cuda.get_device_name(0)
    peak = next((v for k, v in BF16_PEAK.items() if k in name), None)
    row["tokens"] = batch[0].numel()
    for col in ("ours", "eager", "compile"):
        ms = row.get(col + "_ms")
        if ms:
            row[col + "_tokens_s"] = row["tokens"] / (ms / 1e3)
            if peak:
                row[col + "_mfu"] = flops / (ms / 1e3) / peak


def peak_memory(fn, torch):
    """(peak bytes of torch's allocator, device bytes in use at the end)
    over one call of fn: our steps allocate through the CUDA driver, which
    only the second sees."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return torch.cuda.max_memory_allocated(), total - free


def fmt(v, spec=".3g"):
    return "-" if v is None else format(v, spec)


def report_lines(timing):
    """The report's table of the scale models' timing rows (none: [])."""
    lines = []
    scale = [r for r in timing if "tokens" in r]
    if scale:
        lines += ["", "## Scale models: tokens/s, MFU (dense bf16 peak), "
                  "peak memory", "",
                  "| model | N | tokens | ours tok/s | eager tok/s | "
                  "compile tok/s | ours MFU | eager MFU | compile MFU | "
                  "ours device GiB | eager torch peak GiB |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        gib = 2.0 ** 30
        for r in scale:
            ours_peak = r.get("ours_peak") or (None, None)
            eager_peak = r.get("eager_peak") or (None, None)
            lines.append(
                f"| {r['model']} | {r['N']} | {r['tokens']} | "
                f"{fmt(r.get('ours_tokens_s'), '.0f')} | "
                f"{fmt(r.get('eager_tokens_s'), '.0f')} | "
                f"{fmt(r.get('compile_tokens_s'), '.0f')} | "
                f"{fmt(r.get('ours_mfu'), '.1%')} | "
                f"{fmt(r.get('eager_mfu'), '.1%')} | "
                f"{fmt(r.get('compile_mfu'), '.1%')} | "
                f"{fmt(ours_peak[1] and ours_peak[1] / gib, '.1f')} | "
                f"{fmt(eager_peak[0] and eager_peak[0] / gib, '.1f')} |")
    return lines
