// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-cooperative-loops-to-gpu

#bx = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// The block size comes from the thread-level loops: it must be a constant.
func.func @dynamic_threads(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%bx) = (%c0) to (%c1) step (%c1) {
    // expected-error @+1 {{thread-level loop of a cooperative loop needs a constant extent (the block size)}}
    scf.parallel (%tx) = (%c0) to (%n) step (%c1) {
      scf.reduce
    } {mapping = [#tx]}
    scf.reduce
  } {ga.cooperative, mapping = [#bx]}
  return
}

// -----

#bx = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// Every thread must reach every barrier: thread-level loops under a
// condition are not supported.
func.func @conditional(%a: memref<32xf32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%bx) = (%c0) to (%c1) step (%c1) {
    // expected-error @+1 {{around thread-level loops of a cooperative loop: only scf.for is supported}}
    scf.if %c {
      scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
        scf.reduce
      } {mapping = [#tx]}
    }
    scf.reduce
  } {ga.cooperative, mapping = [#bx]}
  return
}

// -----

#bx = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// Values cannot be carried across thread-level loops in registers.
func.func @iter_args(%a: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%bx) = (%c0) to (%c1) step (%c1) {
    // expected-error @+1 {{a loop around thread-level loops cannot carry values}}
    %r = scf.for %i = %c0 to %c32 step %c1 iter_args(%s = %z) -> (f32) {
      scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
        scf.reduce
      } {mapping = [#tx]}
      scf.yield %s : f32
    }
    scf.reduce
  } {ga.cooperative, mapping = [#bx]}
  return
}

// -----

#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A cooperative loop is the grid: it is mapped to blocks only.
func.func @not_blocks(%a: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{a cooperative loop must be mapped to blocks only}}
  scf.parallel (%tx) = (%c0) to (%c1) step (%c1) {
    scf.reduce
  } {ga.cooperative, mapping = [#tx]}
  return
}

// -----

#bx = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// Buffers allocated per block must fit a block's shared memory.
func.func @block_scope_too_large(%a: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{the block-scope buffers of a cooperative loop need 65536 bytes of shared memory, more than the 49152 a block has}}
  scf.parallel (%bx) = (%c0) to (%c1) step (%c1) {
    %t = memref.alloc() : memref<16384xf32>
    scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%tx] : memref<32xf32>
      memref.store %v, %t[%tx] : memref<16384xf32>
      scf.reduce
    } {mapping = [#tx]}
    scf.reduce
  } {ga.cooperative, mapping = [#bx]}
  return
}
