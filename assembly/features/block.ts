// Grow-only working blocks of the features module. Every stage keeps its buffers in
// blocks like these, sized by the largest image seen so far: nothing is allocated per
// call once they are large enough, so memory stays flat however often a kernel runs.

@unmanaged
export class Block {
  ptr: usize = 0;
  cap: usize = 0;

  /** A pointer to at least `bytes` bytes (contents not kept when it grows). */
  @inline
  reserve(bytes: usize): usize {
    if (bytes > this.cap) this.regrow(bytes);
    return this.ptr;
  }

  regrow(bytes: usize): void {
    if (this.ptr != 0) heap.free(this.ptr);
    // an eighth more than asked, so that slowly growing sizes do not reallocate each time
    const cap = bytes + (bytes >> 3) + 64;
    this.ptr = heap.alloc(cap);
    this.cap = cap;
  }
}

/** A Block in static memory (no managed object). */
@inline
export function staticBlock(): Block {
  return changetype<Block>(memory.data(offsetof<Block>()));
}
