# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The permutation rule (_permutation.py) on a plain-torch MoE layer written
# as transformers writes its experts: the token-expert pairs of the whole
# batch sorted by expert, rows gathered by the permutation, grouped
# products by ends counted from the sorted ids, the inverse permutation,
# the sum over each token's experts. Compiled against PyTorch (SGD, N = 3:
# a micro-batch sorts nothing, its rows meet their own experts); the uses
# of the sort that would read across the sorted rows of the whole batch
# are refused at their line. A table looked up by the sorted ids (the
# experts' biases) is sorted as the ids are; a lookup of the batch's own
# values by them reads other samples, which the batch analysis refuses.

import torch
import torch.nn as nn
import torch.nn.functional as F
import transformers.integrations.moe  # noqa: F401 (registers the op)

import zoo
from ga_mlir.torch import compile_train_step

B, T, D, E, K = 6, 4, 8, 4, 2


class SortedExperts(nn.Module):
    """Top-2 routing of [B, T] tokens over E experts, the experts' grouped
    products on the pairs sorted by expert. `misuse` picks a use of the
    sort that the rule refuses."""

    def __init__(self, misuse=None):
        super().__init__()
        self.misuse = misuse
        self.embed = nn.Linear(6, D)
        self.gate = nn.Linear(D, E)
        self.w = nn.Parameter(torch.randn(E, D, D) / 3)
        self.bias = nn.Parameter(torch.randn(E, D) / 3)
        self.head = nn.Linear(D, 5)

    def forward(self, x):
        h = torch.tanh(self.embed(x)).reshape(-1, D)
        top, experts = torch.topk(F.softmax(self.gate(h), -1), K, dim=-1)
        ids, perm = torch.sort(experts.reshape(-1))
        rows = h[perm // K]
        # What the rows are (their device and type) reads nothing of their
        # order: allowed (the kit's MoE model casts so under autocast).
        assert rows.device.type == "cpu" and rows.dtype.is_floating_point
        if self.misuse == "transposed":
            rows = rows.mT.mT  # transposed
        weights = top.reshape(-1)[perm]
        counts = torch.histc(ids.float(), bins=E, min=0, max=E - 1)
        ends = torch.cumsum(counts, dim=0, dtype=torch.int32)
        if self.misuse == "scan":
            rows = torch.cumsum(rows, dim=0)  # scan
        if self.misuse == "mixed":
            rows = rows + h.repeat(K, 1)  # mixed
        y = torch.ops.transformers.grouped_mm_fallback(rows, self.w,
                                                       offs=ends)
        # Each row's expert bias, looked up by the sorted ids (gpt-oss):
        # sorted as the ids are.
        y = y + self.bias[ids]
        if self.misuse == "lookup":
            y = y + h[ids]  # lookup
        y = torch.tanh(y[..., :]) * weights.unsqueeze(-1)
        if self.misuse == "unsorted":
            out = y.reshape(-1, K, D).sum(1)  # unsorted
        else:
            inv = torch.empty_like(perm)
            inv[perm] = torch.arange(perm.shape[0])
            out = y[inv].reshape(-1, K, D).sum(1)
        return self.head(out.reshape(x.shape[0], T, D).mean(1))


def batch(gen):
    return (torch.randn(B, T, 6, generator=gen),
            torch.randint(0, 5, (B,), generator=gen))


# CHECK: sorted experts sgd N=3: {{.*}} OK
failures = zoo.check("sorted experts", SortedExperts, batch,
                     zoo.classification_loss, optimizers=("sgd",), ns=(3,),
                     steps=2)

# CHECK: scan: refused: {{.*}}torch-moe-permutation.py:[[#]]: error: cumsum of values sorted by a permutation (sorted at {{.*}}torch-moe-permutation.py:[[#]])
# CHECK: scan: located: True
# CHECK: mixed: refused: {{.*}}: error: add of a value sorted by a permutation with one in the original order
# CHECK: mixed: located: True
# CHECK: unsorted: refused: {{.*}}: error: reshape of sorted rows across the rows
# CHECK: unsorted: located: True
# CHECK: transposed: refused: {{.*}}: error: the permutation or a value sorted by it reaches __get__ (a tensor view)
# CHECK: transposed: located: True
for misuse in ("scan", "mixed", "unsorted", "transposed"):
    where = f"torch-moe-permutation.py:{zoo.line_of(__file__, misuse)}"
    zoo.refused(misuse, SortedExperts(misuse), zoo.classification_loss,
                batch, where)

# The batch's own rows looked up by the sorted ids: refused by the batch
# analysis (a read of other samples), not by the rule.
# CHECK: lookup: ga-mlir refused the training step:
# CHECK-NEXT: {{.*}}: error: this line reads a per-sample tensor by index
lookup = SortedExperts("lookup")
failures += zoo.call_refused("lookup", lambda: compile_train_step(
    lookup, zoo.classification_loss,
    torch.optim.SGD(lookup.parameters(), lr=0.1),
    example_inputs=batch(torch.Generator().manual_seed(0)), micro_batches=2))
raise SystemExit(failures)
