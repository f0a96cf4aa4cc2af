"""contains_file.py BIG FILE...: exits 1 unless the bytes of every FILE occur
in BIG (an embedded fatbin or cubin in a shared library)."""
import sys

big = open(sys.argv[1], "rb").read()
missing = [f for f in sys.argv[2:] if open(f, "rb").read() not in big]
if missing:
    sys.exit("not embedded in %s: %s" % (sys.argv[1], ", ".join(missing)))
