// Wires the stages in chromaprint's order (src/fingerprinter.cpp):
// int16 samples -> frames -> Hamming window -> power spectrum -> chroma -> chroma filter
// -> normalizer -> rolling integral image -> 16 classifiers -> one word per frame.
import { CHROMA_BANDS, FRAME_SIZE, MAX_FILTER_WIDTH, SPECTRUM_BINS } from './config';
import { framePtr, framerAdvance, framerFull, framerPush, resetFramer } from './framer';
import { applyWindow } from './window';
import { powerSpectrum } from './fft';
import { chromaConsume } from './chroma';
import { chromaFilterConsume, resetChromaFilter } from './chroma_filter';
import { normalizeRow } from './normalizer';
import { integralAddRow, integralRows, resetIntegralImage } from './integral_image';
import { subFingerprint } from './classifiers';

// frame-sized work buffers, allocated once on first use
let windowed: usize = 0;
let power: usize = 0;
const chroma: usize = memory.data(CHROMA_BANDS * 8, 16);
const filtered: usize = memory.data(CHROMA_BANDS * 8, 16);

let words: usize = 0;
let wordCount: i32 = 0;
let wordCapacity: i32 = 0;

function appendWord(word: u32): void {
  if (wordCount == wordCapacity) {
    const cap = wordCapacity == 0 ? 1024 : wordCapacity << 1;
    words = words == 0 ? heap.alloc(<usize>cap << 2) : heap.realloc(words, <usize>cap << 2);
    wordCapacity = cap;
  }
  store<u32>(words + (<usize>wordCount << 2), word);
  wordCount++;
}

function processFrame(): void {
  if (windowed == 0) {
    windowed = heap.alloc(<usize>FRAME_SIZE << 3);
    power = heap.alloc(<usize>SPECTRUM_BINS << 3);
  }
  applyWindow(framePtr(), windowed);
  powerSpectrum(windowed, power);
  chromaConsume(power, chroma);
  if (!chromaFilterConsume(chroma, filtered)) return;
  normalizeRow(filtered);
  integralAddRow(filtered);
  const rows = integralRows();
  if (rows >= MAX_FILTER_WIDTH) appendWord(subFingerprint(rows - MAX_FILTER_WIDTH));
}

/** Starts a new fingerprint (keeps the word buffer's memory for reuse). */
export function fingerprintReset(): void {
  resetFramer();
  resetChromaFilter();
  resetIntegralImage();
  wordCount = 0;
}

/** Feeds `len` int16 samples (11025 Hz mono) at `samples`. */
export function fingerprintConsume(samples: usize, len: i32): void {
  let pos = 0;
  while (pos < len) {
    pos += framerPush(samples + (<usize>pos << 1), len - pos);
    if (framerFull()) {
      processFrame();
      framerAdvance();
    }
  }
}

export function fingerprintWordCount(): i32 {
  return wordCount;
}

/** Pointer to the words so far (u32 each); valid until the next consume. */
export function fingerprintWords(): usize {
  return words;
}
