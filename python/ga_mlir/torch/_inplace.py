"""Zero-copy updates: the step writes the new parameters and optimizer states
into the buffers of the old ones.

After `--ga-accumulate`, the step `@train_step(args) -> (new values...,
loss)` is rewritten (on its text: the printed form of one function) into

    func.func private @train_step_in_place(args) -> (same results) {
      ...
      %u = bufferization.materialize_in_destination %new in %arg_j
      return %u, ..., %loss
    }
    func.func @train_step(args) -> loss {
      %r:K = call @train_step_in_place(args)
      return %r#(K-1)
    }

Upstream passes then do the work, and prove it: `eliminate-empty-tensors`
makes the op that computes `%new` write into `%arg_j`'s tensor; one-shot
bufferization keeps it in place when no later read of the old value
conflicts (otherwise it copies, and the result is no longer the argument);
`drop-equivalent-buffer-results` (in --ga-lower-to-cpu) removes the results
of the private function that are its arguments' buffers. `check_lowered`
then checks that only the loss is left: if an update could not be written in
place, the caller would not see it, so the library is not used.
"""

import re

IMPL = "train_step_in_place"


def _split_top(text):
    """Splits `text` at the commas outside <>, (), [] and {}."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _signature(line, name):
    """(indent, [(arg name, type, attributes)], [result types], function
    attributes) of the `func.func @name(...) -> (...)` line."""
    m = re.match(rf"(\s*)func\.func @{name}\((.*)\) -> (.*?)"
                 r"( attributes \{.*\})? \{$", line)
    if not m:
        return None
    indent, args, results, attrs = m.groups()
    parsed = []
    for entry in _split_top(args):
        a = re.match(r"(%[\w]+): (.*?)( \{.*\})?$", entry)
        if not a:
            return None
        parsed.append((a.group(1), a.group(2), a.group(3) or ""))
    if results.startswith("("):
        results = results[1:-1]
    return indent, parsed, _split_top(results), attrs or ""


def write_results_in_place(text, pairs, name="train_step"):
    """The module `text` with `@name`'s result i written into argument j for
    each (i, j) in `pairs` and dropped from `@name`'s results (see the module
    docstring); None when the function's printed form is not the expected
    one (then the caller keeps the copying path)."""
    lines = text.split("\n")
    head = next((i for i, line in enumerate(lines)
                 if re.match(rf"\s*func\.func @{name}\(", line)), None)
    if head is None:
        return None
    sig = _signature(lines[head], name)
    if sig is None:
        return None
    indent, args, result_types, attrs = sig
    body = indent + "  "
    ret = next((i for i in range(head + 1, len(lines))
                if lines[i].startswith(body + "return ")), None)
    if ret is None or lines[ret + 1] != indent + "}":
        return None
    r = re.match(r"\s*return (.*) : (.*)$", lines[ret])
    values, types = _split_top(r.group(1)), _split_top(r.group(2))
    if len(values) != len(types) or types != result_types:
        return None
    for i, j in pairs:
        if types[i] != args[j][1]:
            return None
    materialized = []
    for i, j in pairs:
        value = f"%ga_in_place_{i}"
        materialized.append(
            f"{body}{value} = bufferization.materialize_in_destination "
            f"{values[i]} in {args[j][0]} : ({types[i]}, {types[i]}) -> "
            f"{types[i]}")
        values[i] = value
    lines[ret:ret + 1] = materialized + [
        f"{body}return {', '.join(values)} : {', '.join(types)}"]
    arg_list = ", ".join(f"{a}: {t}{at}" for a, t, at in args)
    lines[head] = (f"{indent}func.func private @{IMPL}({arg_list}) -> "
                   f"({', '.join(types)}){attrs} {{")
    dropped = {i for i, _ in pairs}
    kept = [i for i in range(len(types)) if i not in dropped]
    names = ", ".join(a for a, _, _ in args)
    arg_types = ", ".join(t for _, t, _ in args)
    typed = ", ".join(f"{a}: {t}" for a, t, _ in args)
    wrapper = [
        f"{indent}func.func @{name}({typed})"
        f" -> ({', '.join(types[i] for i in kept)}) {{",
        f"{body}%r:{len(types)} = call @{IMPL}({names}) : ({arg_types}) -> "
        f"({', '.join(types)})",
        f"{body}return {', '.join(f'%r#{i}' for i in kept)} : "
        f"{', '.join(types[i] for i in kept)}",
        f"{indent}}}"]
    end = ret + len(materialized) + 2  # after the function's closing brace
    lines[end:end] = wrapper
    return "\n".join(lines)


def check_lowered(lowered, num_args, num_kept):
    """Whether the lowered private function takes exactly its `num_args`
    arguments and `num_kept` out-parameters (memref descriptors: two
    pointers each), i.e. every other result was dropped as written in
    place."""
    m = re.search(rf"llvm\.func @{IMPL}\(([^)]*)\)", lowered)
    if not m:
        return False
    return m.group(1).count("!llvm.ptr") == 2 * (num_args + num_kept)
