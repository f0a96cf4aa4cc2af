"""The float64 copy of a training step: every f32 made f64.

Shared by the corpus' optimized-f64 tests (corpus_format.py) and the oracle
of the derived error bounds (../Inputs/error_bound_oracle.py): a float64 run
of the same operations is off from the exact result by 2^-29 of what a
float32 run is, so it serves as the exact result of a float32 step.
"""
import re
import struct

_F32 = re.compile(r"(?:(?<![\w])|(?<=[0-9?]x))f32\b")
_F32_HEX = re.compile(r"0x([0-9A-Fa-f]{8})(\s*:\s*)f32\b")


def float64_copy(text):
    """The step with every f32 made f64: types, and hexadecimal f32 constants
    (-inf as 0xFF800000) re-encoded as the same value in float64."""
    def hex64(m):
        value = struct.unpack("<f", struct.pack("<I", int(m.group(1), 16)))[0]
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        return "0x%016X%sf64" % (bits, m.group(2))
    return _F32.sub("f64", _F32_HEX.sub(hex64, text))
