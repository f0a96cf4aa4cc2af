# RUN: env PYTHONPATH=%ga_python_path %torch_python %s | FileCheck %s
#
# The orders in which the sharded-parameter planner visits its plans
# (ga_mlir.torch._shard_search), against every plan listed (300 random plan
# spaces: up to 3 N, up to 8 decisions an N, decisions of equal savings and
# sizes included, transients removed by a decision or by none, loop
# profiles of points with gathered parameters): Space.bound is, for every
# plan, the larger of what it holds through the loop plus its largest
# transient and (N >= 2) the profile's largest point with the parameters
# its decisions do not keep gathered, plus what they keep resident
# (computed here from those definitions), the profile raising it on some
# plans; by_bytes yields exactly the plans whose lower bound fits the
# budget, each once, in nondecreasing bytes moved (its groups of equal
# bytes split at `chunk`), and stops with None at its cap on visits;
# by_lower_bound yields every plan once, in nondecreasing additive part of
# the bound (the sum of what the decisions keep resident at N >= 2, the
# largest at N = 1), never above the whole bound.
#
# CHECK: bound 300 spaces, {{[0-9]+}} plans: as defined True
# CHECK-SAME: raised-by-profile True
# CHECK: by_bytes 300 spaces, {{[0-9]+}} plans: exact True ordered True
# CHECK: by_bytes capped: stops True
# CHECK: by_lower_bound 300 spaces, {{[0-9]+}} plans: exact True ordered True

import random

from ga_mlir.torch._shard_search import Space, by_bytes, by_lower_bound


def spaces_of(seed):
    rnd = random.Random(seed)
    spaces = []
    for n in rnd.sample([1, 2, 3, 4], rnd.randint(1, 3)):
        items = [((b, kind), rnd.choice([8, 16, 24, 64, 100]) * n,
                  rnd.randint(1, 4), rnd.choice([8, 16, 32, 64]))
                 for b in range(rnd.randint(0, 4))
                 for kind in ("gather", "reduce")[:rnd.randint(1, 2)]]
        transients = [(i[0], rnd.choice([4, 8, 16, 40])) for i in items
                      if rnd.random() < 0.7] + [(None, rnd.choice([0, 8]))]
        # A loop profile (N >= 2 only: Space drops it at N = 1): points of
        # bytes live, with gathered parameters removed by a decision or by
        # none.
        profile = [(rnd.randint(80, 260), [
            (rnd.choice([i[0] for i in items] + [None]),
             rnd.choice([8, 16, 32])) for _ in range(rnd.randint(0, 3))])
            for _ in range(rnd.randint(0, 4))]
        spaces.append(Space(n, 2000 + 10 * n, 50, rnd.randint(100, 200),
                            items, transients, profile))
    return spaces, rnd.randint(80, 400)


def every_plan(spaces):
    for s in spaces:
        for mask in range(1 << len(s.items)):
            taken = [i for k, i in enumerate(s.items) if mask >> k & 1]
            yield s, taken, s.bound([i[0] for i in taken]), \
                s.additive([i[3] for i in taken])


def defined_bound(s, taken):
    names = {i[0] for i in taken}
    extras = [i[3] for i in taken]
    transient = max([b for d, b in s.transients
                     if d is None or d not in names] + [0])
    held = s.resident + (sum(extras) + transient if s.n >= 2 else
                         max(extras + [transient]))
    if s.n < 2 or not s.profile:
        return held, False
    points = max(b + sum(g for d, g in gathered if d not in names)
                 for b, gathered in s.profile) + sum(extras)
    return max(held, points), points > held


same, raised, total = True, False, 0
for seed in range(300):
    for s, taken, bound, _ in every_plan(spaces_of(seed)[0]):
        want, higher = defined_bound(s, taken)
        same &= bound == want
        raised |= higher
        total += 1
print(f"bound 300 spaces, {total} plans: as defined {same} "
      f"raised-by-profile {raised}")

exact = ordered = True
total = 0
for seed in range(300):
    spaces, budget = spaces_of(seed)
    brute = sorted((s.moved - sum(i[1] for i in taken), s.n,
                    tuple(sorted(i[0] for i in taken)))
                   for s, taken, bound, _ in every_plan(spaces)
                   if bound <= budget)
    got = [(m, s.n, tuple(sorted(t)))
           for group in by_bytes(spaces, budget, chunk=3)
           for m, s, t, _ in group]
    total += len(got)
    exact &= sorted(got) == brute
    ordered &= [g[0] for g in got] == sorted(g[0] for g in got)
print(f"by_bytes 300 spaces, {total} plans: exact {exact} "
      f"ordered {ordered}")

spaces = [Space(2, 1000, 10, 0, [((b, "gather"), 10 + b, 1, 8)
                                  for b in range(6)])]
capped = list(by_bytes(spaces, 10 ** 9, visits=5))
print(f"by_bytes capped: stops {capped[-1] is None}")

exact = ordered = True
total = 0
for seed in range(300):
    spaces, _ = spaces_of(seed)
    brute = sorted((additive, s.n, tuple(sorted(i[0] for i in taken)))
                   for s, taken, bound, additive in every_plan(spaces)
                   if bound >= additive)
    got = [(b, s.n, tuple(sorted(t))) for b, s, t in by_lower_bound(spaces)]
    total += len(got)
    exact &= sorted(got) == brute
    ordered &= [g[0] for g in got] == sorted(g[0] for g in got)
print(f"by_lower_bound 300 spaces, {total} plans: exact {exact} "
      f"ordered {ordered}")
