"""`python -m ga_mlir PIPELINE [FILE]`: run a pass pipeline on FILE (or
stdin) through libGACAPI.so and print the result, like
`ga-opt --pass-pipeline=...`. Exits 1 with the diagnostics on failure."""

import sys

from . import PipelineError, run_pipeline


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    pipeline = argv[1]
    if len(argv) == 3 and argv[2] != "-":
        try:
            with open(argv[2], encoding="utf-8") as f:
                ir = f.read()
        except OSError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    else:
        ir = sys.stdin.read()
    try:
        name = argv[2] if len(argv) == 3 and argv[2] != "-" else "<stdin>"
        sys.stdout.write(run_pipeline(ir, pipeline, filename=name))
    except PipelineError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
