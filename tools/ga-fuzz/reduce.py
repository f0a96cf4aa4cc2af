"""Minimiser of ga-fuzz findings.

Two stages, each kept only while the step still fails the same way:
  1. features: regenerate the case with one generator feature disabled
     (gen.Gen draws the same random numbers either way);
  2. results: drop one result of the step, then every statement and argument
     that no longer contributes to a result (a dead-code pass on the text).
"""

import copy
import os
import re
import time

import gen

NAME_RE = re.compile(r"%[A-Za-z_][\w$.]*|%\d+")


def statements(body):
    """Splits body lines into top-level statements (an op with its regions)."""
    stmts = []
    for line in body:
        if line.startswith("  %") or not stmts:
            stmts.append([line])
        else:
            stmts[-1].append(line)
    return stmts


def defs(stmt):
    lhs = stmt[0].split(" = ", 1)[0].strip()
    return [d.split(":")[0] for d in lhs.split(", ")]


def uses(stmt):
    names = set()
    for line in stmt:
        for m in NAME_RE.findall(line.split(" = ", 1)[1] if line is stmt[0] else line):
            names.add(m.split("#")[0])
    return names


def dce(step):
    """Drops statements and arguments that no result depends on."""
    st = copy.copy(step)
    stmts = statements(step.body)
    live = set(n.split("#")[0] for n, _ in step.results)
    keep = []
    for s in reversed(stmts):
        if any(d in live for d in defs(s)):
            keep.append(s)
            live |= uses(s)
    keep.reverse()
    st.body = [l for s in keep for l in s]
    st.args = [a for a in step.args if a[0] in live or "ga.batch" in a[2]]
    st.features = set(step.features)
    st.render()
    return st


def reduce(tools, step, outcome, detail, work, name, classify, nseeds, seed_base,
           case_seed=None, force=(), disable=(), budget_s=120):
    """Returns (smaller step, detail) failing with the same outcome.

    A mismatch is checked on the ga-verify seed that showed it only."""
    m = re.search(r"--seed=(\d+)", detail)
    if outcome == "mismatch" and m:
        nseeds, seed_base = 1, int(m.group(1))
    t0 = time.time()
    path = os.path.join(work, name + "-red.mlir")
    best_detail = [None]

    def fails(st):
        if time.time() - t0 > budget_s:
            return False
        with open(path, "w") as f:
            f.write(st.text)
        o, d = classify(tools, path, st, nseeds, seed_base)
        if o == outcome:
            best_detail[0] = d
            return True
        return False

    best = step
    dis = set(disable)
    # 1. features
    if case_seed is not None:
        for feat in sorted(step.features):
            if feat not in gen.PROBS or feat in force:
                continue
            cand = gen.generate(case_seed, force, dis | {feat})
            if cand.micro_batches != best.micro_batches:
                continue
            if fails(cand):
                dis.add(feat)
                best = cand
    # 2. results
    best = dce(best)
    i = len(best.results) - 1
    while i >= 0 and len(best.results) > 1:
        cand = copy.copy(best)
        cand.results = best.results[:i] + best.results[i + 1:]
        cand = dce(cand)
        if fails(cand):
            best = cand
        i -= 1
    if best_detail[0] is None:
        fails(best)
    best.disabled = sorted(dis)
    return best, best_detail[0] or ""
