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
 * pointer, so that free knows how much it releases. The table is mapped with
 * mmap (an allocation of our own through malloc would recurse) and doubles
 * when half full: a process with PyTorch and a compiler in it holds more
 * than a million blocks at once, and a table of fixed size, once full,
 * scanned all of itself at every call and dropped what did not fit (a step
 * compiled in a process with this library took 14x as long as without it).
 * A free leaves no tombstone: the entries that probed past it move back.
 * Not thread-safe beyond a spin lock: it is meant for measurements, not
 * production.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* glibc's own allocator entry points: no dlsym (which itself allocates). */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);

/* Open addressing, linear probing, 2^bits slots, at most half of them
 * used. */
typedef struct {
  uintptr_t key; /* 0: empty */
  size_t size;
} Entry;
static Entry *table;
static unsigned bits;
static size_t mask;

static long long live, peak, allocations, entries;
static volatile int lock;
static int overflow;

static void acquire(void) {
  /* Yield while another thread holds the lock: on one core (taskset),
     spinning would wait out the holder's whole time slice. */
  while (__sync_lock_test_and_set(&lock, 1))
    sched_yield();
}
static void release(void) { __sync_lock_release(&lock); }

/* Fibonacci hashing: the top `bits` bits of the product. */
static size_t slotOf(uintptr_t key) {
  return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* The slot holding `key`, or the empty slot that ends its chain (there is
 * always one: the table is at most half full). */
static size_t find(uintptr_t key) {
  size_t i = slotOf(key);
  while (table[i].key != key && table[i].key != 0)
    i = (i + 1) & mask;
  return i;
}

/* Maps a table of 2^newBits slots and moves every entry into it; 0 when
 * the mapping fails (the old table stays). */
static int grow(unsigned newBits) {
  size_t slots = (size_t)1 << newBits;
  Entry *fresh = mmap(NULL, slots * sizeof(Entry), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh == MAP_FAILED)
    return 0;
  Entry *old = table;
  size_t oldSlots = old ? mask + 1 : 0;
  table = fresh;
  bits = newBits;
  mask = slots - 1;
  for (size_t i = 0; i < oldSlots; ++i)
    if (old[i].key != 0)
      table[find(old[i].key)] = old[i];
  if (old)
    munmap(old, oldSlots * sizeof(Entry));
  return 1;
}

/* Empties slot i, moving back each later entry of the run whose home slot
 * is not cyclically in (i, j] (it probed past i), so that no chain breaks
 * (deletion for linear probing without tombstones). */
static void removeSlot(size_t i) {
  for (size_t j = (i + 1) & mask; table[j].key != 0; j = (j + 1) & mask) {
    size_t home = slotOf(table[j].key);
    int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      table[i] = table[j];
      i = j;
    }
  }
  table[i].key = 0;
}

static void record(void *ptr, size_t size) {
  if (!ptr)
    return;
  uintptr_t key = (uintptr_t)ptr;
  acquire();
  if ((!table || 2 * (size_t)(entries + 1) > mask + 1) &&
      !grow(table ? bits + 1 : 20)) {
    overflow = 1; /* the counters miss this block from now on */
    release();
    return;
  }
  size_t i = find(key);
  if (table[i].key == key) /* a block freed behind our back */
    live -= (long long)table[i].size;
  else
    ++entries;
  table[i].key = key;
  table[i].size = size;
  live += (long long)size;
  ++allocations;
  if (live > peak)
    peak = live;
  release();
}

static void forget(void *ptr) {
  if (!ptr)
    return;
  uintptr_t key = (uintptr_t)ptr;
  acquire();
  size_t i = table ? find(key) : 0;
  if (table && table[i].key == key) {
    live -= (long long)table[i].size;
    --entries;
    removeSlot(i);
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
/* The pointers the table holds (live allocations). */
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
  size_t i = table ? find(key) : 0;
  if (table && table[i].key == key)
    size = (long long)table[i].size;
  release();
  return size;
}
/* Whether the table could not grow (the counters are then incomplete). */
int ga_heap_overflowed(void) { return overflow; }
