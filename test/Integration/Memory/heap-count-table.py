"""The table of libGAHeapCount.so (run by heap-count-table.test, preloaded):
a process that compiles a step before measuring it holds over a million live
allocations, so the counter must hold more than the 2**20 entries of its old
table without overflowing, and stay exact through churn (deletion without
tombstones): every live pointer's size is found, the live bytes return to
where they started once everything is freed (up to the interpreter's own
allocations meanwhile: SLACK bytes, a few entries)."""

import array
import ctypes
import os
import random

counter = ctypes.CDLL(os.environ["LD_PRELOAD"])
for name in ("ga_heap_live", "ga_heap_entries", "ga_heap_size"):
    getattr(counter, name).restype = ctypes.c_longlong
counter.ga_heap_size.argtypes = [ctypes.c_void_p]
libc = ctypes.CDLL(None)  # the preloaded malloc and free
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

COUNT = 3 << 19  # 1.5 M, half again the old table
SLACK = 1 << 16
pointers = array.array("Q", bytes(8 * COUNT))  # allocated before counting
sizes = array.array("H", (1 + i % 61 for i in range(COUNT)))
entries, live = counter.ga_heap_entries(), counter.ga_heap_live()
for i in range(COUNT):
    pointers[i] = libc.malloc(sizes[i])
grown = counter.ga_heap_entries() - entries, counter.ga_heap_live() - live
print("entries", 0 <= grown[0] - COUNT < 64,
      "live", 0 <= grown[1] - sum(sizes) < SLACK,
      "overflowed", counter.ga_heap_overflowed())
# CHECK: entries True live True overflowed 0

# Churn: free a random half, allocate it again, then check every size.
random.seed(0)
for i in random.sample(range(COUNT), COUNT // 4):
    libc.free(pointers[i])
    pointers[i] = libc.malloc(sizes[i])
wrong = sum(counter.ga_heap_size(pointers[i]) != sizes[i]
            for i in range(0, COUNT, 7))
print("sizes wrong", wrong)
# CHECK: sizes wrong 0
for i in range(COUNT):
    libc.free(pointers[i])
print("freed", abs(counter.ga_heap_entries() - entries) < 64 and
      abs(counter.ga_heap_live() - live) < SLACK)
# CHECK: freed True
