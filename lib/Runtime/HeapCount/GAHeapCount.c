/*===- GAHeapCount.c - count the live heap bytes of a process -------------===*
 *
 * An LD_PRELOAD library that wraps malloc, calloc, realloc, free,
 * aligned_alloc, posix_memalign and memalign, and keeps the number of bytes
 * requested and not yet freed ("live") and its maximum ("peak"). It is how
 * the static memory report (--ga-memory-report) is checked against a compiled
 * step that runs: the live bytes just before the call, the peak during it.
 *
 *   LD_PRELOAD=libGAHeapCount.so program
 *
 * The program reads the counters through the functions below (dlsym, or
 * ctypes.CDLL of this library). Sizes are kept in a table keyed by the
 * pointer, so that free knows how much it releases; the table lives in
 * static storage (no allocation of its own), open addressing with linear
 * probing and deletion by backward shift: no tombstones, so a probe stays
 * as short after millions of allocations (a compilation in the measuring
 * process) as at the start. Not thread-safe beyond a spin lock that yields
 * the core while it waits: it is meant for measurements, not production.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* glibc's own allocator entry points: no dlsym (which itself allocates). */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);

/* Open addressing, linear probing; a power of two. A process that compiles
   a step before measuring it holds a million allocations and more (the
   MLIR of a small transformer's step); 4M slots (64 MiB of zero pages,
   touched as used) keep the load under a half up to 2M. */
#define TABLE_LOG2 22
#define TABLE_SIZE (1u << TABLE_LOG2)
static struct {
  uintptr_t key; /* 0: empty */
  size_t size;
} table[TABLE_SIZE];

static long long live, peak, allocations, entries;
static volatile int lock;
static int overflow;

static void acquire(void) {
  /* Yield while another thread holds the lock: on a single core (taskset)
     spinning would wait out the holder's whole time slice. */
  while (__sync_lock_test_and_set(&lock, 1))
    sched_yield();
}
static void release(void) { __sync_lock_release(&lock); }

static size_t slotOf(uintptr_t key) {
  /* Fibonacci hashing: the product's high bits depend on every bit of the
     address (its low bits only on the low bits). */
  return (size_t)(((uint64_t)(key >> 4) * 0x9E3779B97F4A7C15ull) >>
                  (64 - TABLE_LOG2));
}

static void record(void *ptr, size_t size) {
  if (!ptr)
    return;
  uintptr_t key = (uintptr_t)ptr;
  acquire();
  size_t i = slotOf(key);
  for (size_t probes = 0; probes < TABLE_SIZE;
       ++probes, i = (i + 1) & (TABLE_SIZE - 1)) {
    if (table[i].key == 0) {
      table[i].key = key;
      table[i].size = size;
      ++entries;
      live += (long long)size;
      ++allocations;
      if (live > peak)
        peak = live;
      release();
      return;
    }
  }
  overflow = 1;
  release();
}

/* Empties slot `hole` and moves back the entries after it whose probe
   would otherwise cross the empty slot (Knuth's algorithm R): every key
   stays reachable from its home slot without a tombstone. */
static void removeSlot(size_t hole) {
  for (size_t j = (hole + 1) & (TABLE_SIZE - 1); table[j].key != 0;
       j = (j + 1) & (TABLE_SIZE - 1)) {
    size_t home = slotOf(table[j].key);
    /* The entry at j may stay when its home lies cyclically in (hole, j]. */
    int stays =
        hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays)
      continue;
    table[hole] = table[j];
    hole = j;
  }
  table[hole].key = 0;
}

static void forget(void *ptr) {
  if (!ptr)
    return;
  uintptr_t key = (uintptr_t)ptr;
  acquire();
  size_t i = slotOf(key);
  for (size_t probes = 0; probes < TABLE_SIZE && table[i].key != 0;
       ++probes, i = (i + 1) & (TABLE_SIZE - 1)) {
    if (table[i].key == key) {
      live -= (long long)table[i].size;
      --entries;
      removeSlot(i);
      break;
    }
  }
  release();
}

void *malloc(size_t size) {
  void *ptr = __libc_malloc(size);
  record(ptr, size);
  return ptr;
}

void *calloc(size_t count, size_t size) {
  void *ptr = __libc_calloc(count, size);
  record(ptr, count * size);
  return ptr;
}

void *realloc(void *old, size_t size) {
  forget(old);
  void *ptr = __libc_realloc(old, size);
  if (ptr || size == 0)
    record(ptr, size);
  return ptr;
}

void free(void *ptr) {
  forget(ptr);
  __libc_free(ptr);
}

void *memalign(size_t alignment, size_t size) {
  void *ptr = __libc_memalign(alignment, size);
  record(ptr, size);
  return ptr;
}

void *aligned_alloc(size_t alignment, size_t size) {
  return memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  void *ptr = memalign(alignment, size);
  if (!ptr)
    return ENOMEM;
  *out = ptr;
  return 0;
}

/* The counters. */
long long ga_heap_live(void) { return live; }
long long ga_heap_peak(void) { return peak; }
long long ga_heap_allocations(void) { return allocations; }
/* The number of live allocations the table holds. */
long long ga_heap_entries(void) { return entries; }
/* Starts a new measurement: the peak becomes the current live bytes. */
void ga_heap_reset_peak(void) {
  acquire();
  peak = live;
  release();
}
/* The size requested for a live pointer, or -1. */
long long ga_heap_size(void *ptr) {
  uintptr_t key = (uintptr_t)ptr;
  long long size = -1;
  acquire();
  size_t i = slotOf(key);
  for (size_t probes = 0; probes < TABLE_SIZE && table[i].key != 0;
       ++probes, i = (i + 1) & (TABLE_SIZE - 1))
    if (table[i].key == key) {
      size = (long long)table[i].size;
      break;
    }
  release();
  return size;
}
/* Whether the table overflowed (the counters are then incomplete). */
int ga_heap_overflowed(void) { return overflow; }
