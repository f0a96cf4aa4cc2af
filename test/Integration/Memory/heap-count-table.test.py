"""Allocates 1.5 million blocks through libc under libGAHeapCount.so, churns
a million more, then frees them: prints whether the table knows each block's
size and whether freeing them lowers the live bytes by exactly their sum."""
import ctypes
import sys

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
count = ctypes.CDLL(sys.argv[1])
count.ga_heap_live.restype = ctypes.c_longlong
count.ga_heap_size.restype = ctypes.c_longlong
count.ga_heap_size.argtypes = [ctypes.c_void_p]

sizes = [16 + i % 48 for i in range(1500000)]
blocks = [libc.malloc(s) for s in sizes]
for _ in range(1000000):  # churn: each free must find its block quickly
    libc.free(libc.malloc(24))
known = all(count.ga_heap_size(b) == s for b, s in zip(blocks, sizes))
print("live blocks", len(blocks), "sizes", "known" if known else "LOST")
print("overflowed", count.ga_heap_overflowed())
before = count.ga_heap_live()
for b in blocks:
    libc.free(b)
print("freeing them: live bytes",
      "fell by their sum" if before - count.ga_heap_live() == sum(sizes)
      else f"fell by {before - count.ga_heap_live()}, not {sum(sizes)}")
