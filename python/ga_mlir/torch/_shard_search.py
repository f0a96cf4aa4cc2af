"""The order in which _shard_plan.fit measures the sharded-parameter plans:
lazily, never a list of every plan (4^buckets an N).

A plan is N and a set of decisions (per bucket: kept gathered across the
loop, reduced after the loop), each saving a fixed number of bytes moved
per step. What rules a plan out without compiling it is a lower bound on
its per-rank peak (`lower_bound`): what the step as compiled must hold at
one point whatever its buffers share. --ga-memory-report's total peak
counts every argument buffer (this rank's parameter rows, optimizer state,
samples, out-parameters: the same whatever the plan) and, inside the
micro-batch loop (N >= 2), the accumulators (carried through it), every
kept bucket's gathered parameters and every deferred bucket's full
accumulators (gathered or zeroed before the loop, read in every
iteration) at once, and, where a parameter is gathered or a gradient
reduce-scattered in the loop, that whole tensor too: all live together,
so no two share a buffer and none is an argument. At N = 1 the loop may
be folded, so only the largest of them is counted. At N >= 2 the default
plan's loop profile (Space.profile_bound: the buffers live at each point
of its loop, activations and gathered parameters included) gives a second
bound, the larger taken; plans above the budget by their bound are never
compiled.

`by_bytes` yields the plans whose bound fits the budget in order of bytes
moved (a best-first branch and bound over the decisions, the bound of a
partial plan the fractional-knapsack relaxation of its remaining
decisions under the room its bound leaves); `by_lower_bound` yields every
plan in order of its bound (for the smallest budget that fits). Both are
exact orders; a caller stops them when it has what it needs."""

import heapq


def lower_bound(held, extras, transient, n):
    """The least per-rank peak a plan at `n` micro-batches can have: what
    the default plan holds through the loop (`held`: arguments and
    accumulators) plus what its decisions keep resident (`extras`), all at
    once inside the loop when N >= 2, and `transient`, the largest
    parameter gathered or gradient reduced inside the loop by the plan
    (live where it is used, beside all of those). At N = 1 (the loop may
    be folded) the largest of them alone."""
    if n >= 2:
        return held + sum(extras) + transient
    return held + max(list(extras) + [transient])


class Space:
    """The plans at one N: `moved` and `calls` of the default plan (every
    decision not taken), `held` (what it holds through the loop, the
    largest over the ranks), `items`, each (decision, bytes saved,
    collectives saved, resident bytes) for the decisions that save bytes,
    and `transients`, each (decision, bytes): a whole parameter gathered,
    or a whole gradient reduce-scattered, per micro-batch unless that
    decision (None: none) is taken. `profile` (N >= 2 only), the
    points of the default plan's micro-batch loop (--ga-memory-report's
    loop_profile, every rank's): each (bytes live there with the
    arguments, [(decision, bytes) of each parameter gathered there]).

    Why a plan's peak is at least, at every point p of the profile, p's
    bytes, the gathered parameters at p whose decision it does not take,
    and what its decisions keep resident (profile_bound): the profile
    counts a buffer from the first op that accesses it to the last, a
    range within its contents' life whatever storage the lowering gives
    it, and one of a run-time size (a micro-batch's activation) from its
    allocation to its deallocation at the end of the loop's body (a heap
    block of its own: --ga-share-buffers takes static shapes only), so
    the buffers counted at p hold distinct bytes in any bufferization of
    the same ops. A plan's loop runs the default plan's
    ops but the collectives its decisions move out (a kept bucket's
    gathers, a deferred bucket's reduce-scatters and their buffers, left
    out of the profile's bytes): every other buffer live at p is live at
    p in the plan, beside its kept buckets' parameters and the full
    accumulators' extra rows, live through the loop. The static storage
    is held for the whole call and the arguments throughout, so the
    report's total peak is at least that sum. fit() checks it on every
    plan it compiles (bound_held)."""

    def __init__(self, n, moved, calls, held, items, transients=(),
                 profile=()):
        self.n, self.moved, self.calls = n, moved, calls
        self.items = items
        self.transients = list(transients)
        # Points alike once (every rank's profile is joined).
        self.profile = sorted({(b, tuple(sorted(g, key=repr)))
                               for b, g in profile}, key=repr) \
            if n >= 2 else []
        # What every plan holds, the decisions aside: the larger of the
        # two bounds' parts that no decision changes.
        self.resident = held
        self.held = max([held] + [b for b, _ in self.profile])

    def additive(self, extras):
        """The part of the bound that only grows with the decisions (what
        the searches order and prune by: at most the bound)."""
        return self.held + (sum(extras) if self.n >= 2 else
                            max(extras, default=0))

    def profile_bound(self, taken, extras):
        """The least peak the profile proves for the plan taking `taken`
        (a set) with resident `extras` (0 without a profile)."""
        return max((b + sum(g for d, g in gathered if d not in taken)
                    for b, gathered in self.profile), default=0) + \
            sum(extras)

    def bound(self, taken):
        """The plan's lower bound: lower_bound, or profile_bound where
        higher (both proven; N >= 2 only for the second)."""
        taken = set(taken)
        extras = [i[3] for i in self.items if i[0] in taken]
        first = lower_bound(
            self.resident, extras,
            max((b for d, b in self.transients if d is None or
                 d not in taken), default=0), self.n)
        return max(first, self.profile_bound(taken, extras)) \
            if self.profile else first


def _relaxed(items, k, room):
    """An upper bound on the bytes that items[k:] (sorted by bytes saved
    per resident byte, highest first) save within `room` resident bytes:
    the fractional knapsack's optimum, rounded up."""
    total = 0
    for _, saved, _, extra in items[k:]:
        if extra <= room:
            total, room = total + saved, room - extra
        else:
            return total - (-saved * room // extra)
    return total


def by_bytes(spaces, budget, chunk=64, visits=20000):
    """The plans of `spaces` whose lower bound fits `budget`, in order of
    bytes moved: lists of (moved, space, decisions taken, calls) of equal
    bytes moved (at most `chunk` in a list; the next list may continue the
    same bytes). Lazily: a heap of partial plans keyed by the fewest bytes
    any completion can move, pruned by the additive part of the bound;
    a complete plan is yielded when its whole bound fits. After `visits`
    plans, partial or complete, it yields None and stops (the order is
    proven only up to there)."""
    heap, counter = [], 0
    prepared = []
    for s in spaces:
        room = budget - s.held
        if room < 0:
            continue
        # At N = 1 a decision fits alone or not at all (the bound counts
        # the largest); at N >= 2 they add up within the room.
        items = [i for i in s.items if i[3] <= room]
        if s.n < 2:
            items = [(d, saved, calls, 0) for d, saved, calls, _ in items]
        items.sort(key=lambda i: (-(i[1] / i[3]) if i[3] else
                                  -float("inf"), -i[1]))
        prepared.append((s, items, room))
        heapq.heappush(heap, (s.moved - _relaxed(items, 0, room), 1,
                              counter, len(prepared) - 1, 0, 0, 0, 0, ()))
        counter += 1
    group = []
    while heap:
        visits -= 1
        if visits < 0:
            yield group or None
            if group:
                yield None
            return
        key, partial, _, which, k, saved, calls, extra, taken = \
            heapq.heappop(heap)
        if group and (key > group[0][0] or len(group) >= chunk):
            yield group
            group = []
        s, items, room = prepared[which]
        if not partial:
            if s.bound(taken) <= budget:
                group.append((key, s, taken, s.calls - calls))
            continue
        if k == len(items):
            heapq.heappush(heap, (s.moved - saved, 0, counter, which, k,
                                  saved, calls, extra, taken))
            counter += 1
            continue
        decision, gain, fewer, more = items[k]
        children = [(saved, calls, extra, taken)]
        if extra + more <= room:
            children.append((saved + gain, calls + fewer, extra + more,
                             taken + (decision,)))
        for c_saved, c_calls, c_extra, c_taken in children:
            bound = s.moved - c_saved - _relaxed(items, k + 1,
                                                 room - c_extra)
            heapq.heappush(heap, (bound, 1, counter, which, k + 1, c_saved,
                                  c_calls, c_extra, c_taken))
            counter += 1
    if group:
        yield group


def by_lower_bound(spaces):
    """Every plan of `spaces` in order of the additive part of its bound
    (Space.additive): (that part, space, decisions taken); its whole
    bound is at least that part. Each set of decisions is reached once (a
    child adds a decision after the last one its parent added); adding a
    decision never lowers that part, so the heap's order is its order."""
    heap, counter = [], 0
    for which, s in enumerate(spaces):
        heapq.heappush(heap, (s.held, counter, which, -1, ()))
        counter += 1
    while heap:
        bound, _, which, last, taken = heapq.heappop(heap)
        s = spaces[which]
        yield bound, s, tuple(s.items[i][0] for i in taken)
        extras = [s.items[i][3] for i in taken]
        for j in range(last + 1, len(s.items)):
            heapq.heappush(heap, (s.additive(extras + [s.items[j][3]]),
                                  counter, which, j, taken + (j,)))
            counter += 1
