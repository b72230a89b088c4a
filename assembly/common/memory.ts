// Unmanaged buffers shared by every kernel module.
//
// Kernels never allocate managed objects on their hot paths: the minimal runtime
// only reclaims those on an explicit __collect(). Instead the host asks for raw
// blocks (heap.alloc / heap.free go straight to the TLSF allocator) and passes
// pointers. `scratch` is the one reusable input block of a module: it only grows,
// so memory stays flat however often it is used.

let scratchPtr: usize = 0;
let scratchCap: usize = 0;

/** A block of at least `len` bytes, reused across calls (contents not kept when it grows). */
export function scratch(len: usize): usize {
  if (len > scratchCap) {
    if (scratchPtr != 0) heap.free(scratchPtr);
    let cap: usize = scratchCap << 1;
    if (cap < len) cap = len;
    if (cap < 65536) cap = 65536;
    scratchPtr = heap.alloc(cap);
    scratchCap = cap;
  }
  return scratchPtr;
}

/** A long-lived block owned by the host until it calls `release`. */
export function alloc(len: usize): usize {
  return heap.alloc(len > 0 ? len : 1);
}

export function release(ptr: usize): void {
  if (ptr != 0) heap.free(ptr);
}
