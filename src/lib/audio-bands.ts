// Placeholder, replaced below once tuned.
export function audioBands(words: Uint32Array): number[][] {
  void words;
  return [];
}
