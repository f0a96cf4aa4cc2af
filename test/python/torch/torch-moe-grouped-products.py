# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The grouped products of mixture-of-experts layers traced with static
# shapes (_moe): ga_mlir::grouped_mm and its backward, traced once and run
# on other offsets (an empty group, rows past the last offset) against
# numpy's float64 products per group, several seeds; transformers' own
# experts (Mixtral's sparse block, its default grouped_mm implementation)
# traced on one batch and run on a batch in which an expert receives no
# token, against transformers' eager per-expert loop in float64; topk's
# backward (a scatter torch-mlir crashes on) decomposed exactly; and the
# zoo's MoE models compiled, the sort of the token-expert pairs left out by
# the permutation rule (_permutation.py; their numbers: torch-moe-zoo-*.py).

import copy
import sys

import numpy as np
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import model_zoo
import moe_models
from ga_mlir.torch import CompileError, _moe, compile_train_step
from ga_mlir.torch._export import _tracing

model_zoo.quiet()
failures = 0


def zoo_line(marker):
    """The number of this file's line that ends with `# marker`."""
    with open(__file__) as f:
        return next(i + 1 for i, text in enumerate(f)
                    if text.rstrip().endswith("# " + marker))


def traced(fn, *args):
    """make_fx of `fn` under the trace's modes, functionalized after (as
    _export._trace does for the grouped products)."""
    with _tracing(torch.nn.Module(), False):
        graph = make_fx(fn)(*args)
    return make_fx(torch.func.functionalize(
        lambda *a: torch.fx.Interpreter(graph).run(*a)))(*args)


def oracle(x, w, offs, g):
    """out, d_x, d_w of sum(out * g) in numpy float64, group by group."""
    x, w, g = (t.double().numpy() for t in (x, w, g))
    out, dx, dw = np.zeros((x.shape[0], w.shape[2])), np.zeros_like(x), \
        np.zeros_like(w)
    start = 0
    for e, end in enumerate(offs.tolist()):
        out[start:end] = x[start:end] @ w[e]
        dx[start:end] = g[start:end] @ w[e].T
        dw[e] = x[start:end].T @ g[start:end]
        start = max(start, end)
    return out, dx, dw


def loss(x, w, offs, g):
    out = _moe.grouped_product(x, w, offs)
    return (out * g).sum(), out


# CHECK: grouped_mm seed 0: {{.*}} OK
# CHECK: grouped_mm seed 1: {{.*}} OK
# CHECK: grouped_mm seed 2: {{.*}} OK
# CHECK: grouped_mm nodes: ga_mlir.grouped_mm.default
# CHECK-SAME: ga_mlir.grouped_mm.default ga_mlir.grouped_mm_weight_grad.default
step = torch.func.grad_and_value(loss, argnums=(0, 1), has_aux=True)
gen = torch.Generator().manual_seed(0)
S, K, N, E = 12, 5, 3, 4
example = (torch.randn(S, K, generator=gen), torch.randn(E, K, N,
                                                       generator=gen),
           torch.tensor([3, 6, 9, 12]), torch.randn(S, N, generator=gen))
graph = traced(step, *example)
OTHER_OFFSETS = [torch.tensor([0, 5, 5, 12]),   # groups 0 and 2 empty
                 torch.tensor([12, 12, 12, 12]),  # one group
                 torch.tensor([2, 4, 7, 9])]      # rows 9.. past the end
for seed, offs in enumerate(OTHER_OFFSETS):
    gen = torch.Generator().manual_seed(seed + 1)
    x, w, g = torch.randn(S, K, generator=gen), \
        torch.randn(E, K, N, generator=gen), torch.randn(S, N, generator=gen)
    (dx, dw), (_, out) = graph(x, w, offs, g)
    want = oracle(x, w, offs, g)
    err = max(np.abs(a.double().numpy() - b).max()
              for a, b in zip((out, dx, dw), want))
    ok = err < 1e-5
    failures += not ok
    print(f"grouped_mm seed {seed}: max |err| {err:.2g} "
          f"{'OK' if ok else 'FAIL'}")
print("grouped_mm nodes:", " ".join(
    str(n.target) for n in graph.graph.nodes
    if str(n.target).startswith("ga_mlir.")))


# transformers' experts: Mixtral's sparse block (router, top-2, its
# grouped_mm experts) traced on one batch, run on another.
# CHECK: mixtral block, example batch: {{.*}} OK
# CHECK: mixtral block, expert 0 without tokens (0 pairs): {{.*}} OK
torch.manual_seed(0)
model = moe_models.mixtral(layers=1)
block = model.model.layers[0].mlp
names = [n for n, _ in block.named_parameters()]
eager = copy.deepcopy(model).double()
eager.set_experts_implementation("eager")
eager_block = eager.model.layers[0].mlp


def block_loss(params, h, g):
    out = torch.func.functional_call(block, dict(zip(names, params)), (h,))
    return (out * g).sum()


params = [p.detach().clone() for p in block.parameters()]
T = 16
h0 = torch.randn(2, T // 2, 32)
g0 = torch.randn(2, T // 2, 32)
block_step = traced(torch.func.grad(block_loss, argnums=(0, 1)), params, h0,
                    g0)
# The second batch: every hidden state positive and the router's row of
# expert 0 negative, so that no token chooses it.
h1 = torch.rand(2, T // 2, 32) + 0.5
router = [i for i, n in enumerate(names) if n == "gate.weight"][0]
moved = [p.clone() for p in params]
moved[router][0] = -1.0
for label, ps, h, g in [("example batch", params, h0, g0),
                        ("expert 0 without tokens", moved, h1, g0)]:
    dps, dh = block_step(ps, h, g)
    for p, q in zip(eager_block.parameters(), ps):
        p.data = q.double().clone()
        p.grad = None
    hh = h.double().requires_grad_()
    out = eager_block(hh)
    (out * g.double()).sum().backward()
    chosen = torch.topk(torch.softmax(h.reshape(-1, 32) @ ps[router].t(), -1),
                        2).indices
    zero = (chosen == 0).sum().item()
    err = max([(a.double() - p.grad).abs().max().item()
               for a, p in zip(dps, eager_block.parameters())] +
              [(dh.double() - hh.grad).abs().max().item()])
    ok = err < 1e-4
    failures += not ok
    what = label + (f" ({zero} pairs)" if "without" in label else "")
    print(f"mixtral block, {what}: max |err| {err:.2g} "
          f"{'OK' if ok else 'FAIL'}")


# topk's backward writes the gradient of the k values at their indices
# (aten.scatter.src), which torch-mlir's lowering crashes on (a segmentation
# fault): _routing decomposes it into k rounds of torch.where, compared here
# with PyTorch's scatter (rows of 4 and 7 experts, k = 1, 2, 3).
# CHECK: topk backward scatter: max |err| 0 OK
from ga_mlir.torch import _routing  # noqa: E402

worst = 0.0
for shape, dim, k in (((32, 4), -1, 2), ((5, 7, 3), 1, 3), ((6, 4), 1, 1)):
    for seed in range(3):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(shape, generator=gen)
        _, index = torch.topk(x, k, dim=dim)
        grad = torch.randn(index.shape, generator=gen)
        ref = torch.zeros(shape).scatter(dim, index, grad)
        got = _routing._scatter_src(torch.zeros(shape), dim, index, grad)
        worst = max(worst, (ref - got).abs().max().item())
failures += worst != 0
print(f"topk backward scatter: max |err| {worst:.2g} "
      f"{'OK' if worst == 0 else 'FAIL'}")


# The zoo's MoE models (one layer of 4 experts, top-2; SGD, N = 2): the
# grouped products import and the sort of the token-expert pairs by expert
# in transformers' experts is left out by the permutation rule
# (_permutation.py), so the steps compile (their numbers against PyTorch:
# torch-moe-zoo-*.py); with output_router_logits (the balance loss) too.
# (Mixtral with transformers' eager experts, the loop over the experts hit:
# torch-moe-expert-loop.py.)
# CHECK: mixtral: ACCEPTED
# CHECK: qwen3-moe: ACCEPTED
# CHECK: olmoe: ACCEPTED
# CHECK: mixtral router logits: ACCEPTED
for name, make, kw in (
        ("mixtral", moe_models.mixtral, {}),
        ("qwen3-moe", moe_models.qwen3_moe, {}),
        ("olmoe", moe_models.olmoe, {}),
        ("mixtral router logits", moe_models.mixtral,
         {"router_logits": True})):
    model = make(layers=1, **kw)
    try:
        compile_train_step(
            model, model_zoo.hf_loss,
            torch.optim.SGD(model.parameters(), lr=0.1),
            example_inputs=model_zoo.padded_text(
                torch.Generator().manual_seed(0), 4), micro_batches=2)
        print(f"{name}: ACCEPTED")
    except CompileError as error:
        failures += 1
        first = str(error).splitlines()[0]
        where, _, said = first.partition(": error: ")
        file = "/".join(where.split(":")[0].split("/")[-3:])
        print(f"{name}: refused at {file}, a sort: "
              f"{'a sort (torch.sort' in said}: {said[:200]}")


# A mixture of experts written with torch.nn.functional.grouped_mm (also
# traced as ga_mlir::grouped_mm) whose group ends are counted from the
# unsorted ids by a comparison: the rule does not prove them the counts of
# the sorted rows, so the product of the sorted rows is refused at its line.
# CHECK: plain grouped_mm: refused at the marked line: True {{.*}}: error: a grouped product of sorted rows whose group ends are not the counts of the sorted ids
class PlainMoE(torch.nn.Module):
    def __init__(self, d=16, experts=4):
        super().__init__()
        self.router = torch.nn.Linear(d, experts, bias=False)
        self.w = torch.nn.Parameter(torch.randn(experts, d, d) / 4)
        self.head = torch.nn.Linear(d, 3)

    def forward(self, x):
        expert = self.router(x).argmax(-1)
        order = torch.argsort(expert)
        counts = (expert[:, None] == torch.arange(4)).sum(0)
        ends = torch.cumsum(counts, 0).to(torch.int32)
        rows = x[order]
        y = torch.nn.functional.grouped_mm(rows, self.w, offs=ends)  # mm
        return self.head(y[torch.argsort(order)])


plain = PlainMoE()
try:
    compile_train_step(
        plain, lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y),
        torch.optim.SGD(plain.parameters(), lr=0.1),
        example_inputs=(torch.randn(8, 16), torch.randint(0, 3, (8,))),
        micro_batches=2)
    print("plain grouped_mm: ACCEPTED")
    failures += 1
except CompileError as error:
    first = str(error).splitlines()[0]
    print("plain grouped_mm: refused at the marked line:",
          first.startswith(f"{__file__}:{zoo_line('mm')}:"), first[:200])

# CHECK: failures: 0
print(f"failures: {failures}")
sys.exit(failures != 0)
