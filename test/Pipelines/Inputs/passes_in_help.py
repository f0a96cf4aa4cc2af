"""Checks that every pass of dumped pass pipelines is listed by `ga-opt --help`.

    passes_in_help.py HELP DUMP...

HELP is the output of `ga-opt --help`; each DUMP the stderr of
`ga-opt --<pipeline> --dump-pass-pipeline` (the pipeline as nested textual
pass lists: `name{options},` per line, op anchors as `op.name(`). Prints, per
dump, the number of passes and the ga passes among them; exits 1 naming every
pass that `ga-opt --help` does not list (a C++ PassWrapper that was never
declared in TableGen and registered, say).
"""

import os
import re
import sys

# One pass per line: its argument, then optional `{options}`, then an
# optional comma. Op anchors (`func.func(`) and the closing `)` are skipped.
PASS_LINE = re.compile(r"^\s*([a-z][a-z0-9_-]*)(\{.*\})?,?\s*$")


def passes_of(dump):
    names = []
    for line in dump.splitlines():
        m = PASS_LINE.match(line)
        if m:
            names.append(m.group(1))
    return names


def main(argv):
    with open(argv[1]) as f:
        listed = set(re.findall(r"^\s+--([a-z][a-z0-9_-]*)", f.read(), re.M))
    status = 0
    for path in argv[2:]:
        with open(path) as f:
            dump = f.read()
        if "Pass Manager with" not in dump:
            print(f"{path}: no pass pipeline dump:\n{dump}")
            status = 1
            continue
        names = passes_of(dump)
        missing = sorted({n for n in names if n not in listed})
        label = os.path.basename(path)
        for name in missing:
            print(f"{label}: pass '{name}' is not listed by ga-opt --help")
            status = 1
        ga = sorted({n for n in names if n.startswith("ga-")})
        print(f"{label}: {len(names)} passes, {len(missing)} not listed; "
              f"ga passes: {' '.join(ga)}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
