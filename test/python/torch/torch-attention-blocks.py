# RUN: env PYTHONPATH=%ga_python_path:%S %torch_python %s | FileCheck %s
#
# The block form of the fused attention pair (_attention) in a compiled
# step: HF Llama and GPT-2 (SDPA, a padding mask) build their causal mask
# inside the forward from index comparisons and the batch's padding. The
# trace reads which keys the mask excludes for every batch (_known_mask):
# the causal ones, never the padding's, which the example batch decides
# only for itself. The example batch pads keys 12-15 of every sequence;
# the steps then run on batches that use them, against PyTorch's own
# AdamW step (float32, 1e-4 of the parameters' scale after 3 steps: a
# skipped key that matters moves the results by the values themselves).

import copy

import torch

import model_zoo
from ga_mlir.torch import _attention, compile_train_step

model_zoo.quiet()
_attention.BLOCK_ROWS = 4
taken = []
blocks = _attention._blocks
_attention._blocks = lambda *a: taken.append(blocks(*a)) or taken[-1]

T = 16


def batch(seed, length):
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 64, (4, T), generator=gen)
    lengths = torch.full((4,), length)
    lengths[1] = T  # one full sequence in the run's batches
    mask = (torch.arange(T)[None, :] < lengths[:, None]).long()
    if length < T:
        mask[1, length:] = 0  # the example: keys 12-15 padded everywhere
    ids = ids.masked_fill(mask == 0, 0)
    return ids, mask, ids.masked_fill(mask == 0, -100)


def model(name):
    torch.manual_seed(0)
    if name == "llama":
        return model_zoo._hf(
            "LlamaConfig", "LlamaForCausalLM", vocab_size=64, hidden_size=32,
            intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=T, bos_token_id=1,
            eos_token_id=1, pad_token_id=0, attn_implementation="sdpa")
    return model_zoo._hf(
        "GPT2Config", "GPT2LMHeadModel", vocab_size=64, n_positions=T,
        n_embd=32, n_layer=1, n_head=4, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=1, eos_token_id=1,
        attn_implementation="sdpa")


for name in ("llama", "gpt2"):
    ours = model(name)
    theirs = copy.deepcopy(ours)
    opt = torch.optim.AdamW(ours.parameters(), lr=1e-3)
    ref_opt = torch.optim.AdamW(theirs.parameters(), lr=1e-3)
    taken.clear()
    step = compile_train_step(ours, model_zoo.hf_loss, opt,
                              example_inputs=batch(0, 12), micro_batches=2)
    print(name, "blocks:", sorted({tuple(b) for b in taken if b}))
    for seed in range(1, 4):
        b = batch(seed, T)
        step(*b)
        ref_opt.zero_grad()
        model_zoo.hf_loss(theirs, *b).backward()
        ref_opt.step()
    diff = max((a - b).abs().max().item()
               for a, b in zip(ours.parameters(), theirs.parameters()))
    print(name, "parameters", "OK" if diff < 1e-4 else f"FAIL {diff:.3g}")
# Queries 12-15 keep keys 12-15: the padding of the example is not read.
# CHECK: llama blocks: [((0, 4, 0, 4), (4, 8, 0, 8), (8, 12, 0, 12), (12, 16, 0, 16))]
# CHECK: llama parameters OK
# CHECK: gpt2 blocks: [((0, 4, 0, 4), (4, 8, 0, 8), (8, 12, 0, 12), (12, 16, 0, 16))]
# CHECK: gpt2 parameters OK
