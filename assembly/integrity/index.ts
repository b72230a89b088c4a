// The integrity kernel module (build/integrity.{simd,scalar}.wasm): structure walks,
// signature scan, entropy, LSB statistics and the Unicode scan. Every entry resets
// the static output block (output.ts) and writes its findings there.
export { scratch, alloc, release } from '../common/memory';
import { resetOutput } from './output';
import { walkPng as png } from './png';
import { walkJpeg as jpeg, jpegExtent as jpegOne } from './jpeg';
import { walkGif as gif } from './gif';
import { pdfEnd as pdfEof, pdfScanNames as pdfNames } from './pdf';
import { zipEnd as zip } from './zip';
import { scanSignatures as sigs } from './signatures';
import { walkTiff as tiff } from './tiff';
import { riffEnd as riff, bmpEnd as bmp, oggEnd as ogg, isoBmffEnd as isoBmff, mp4HasLocation, walkId3 as id3, walkFlac as flac } from './containers';
import { entropyWindows as windows, entropyOf as entropyRange, longestBase64Run as base64Run } from './entropy';
import { lsbChannel as lsb, gammaQ } from './lsb';
import { scanText as text } from './unicode';
import { crc32 as crc } from './crc32';
export { outputPtr, outputCount, outputDropped, statsPtr, resetOutput } from './output';

export function walkPng(ptr: usize, len: usize, verifyCrc: bool): i32 { resetOutput(); return png(ptr, len, 0, verifyCrc); }
export function walkJpeg(ptr: usize, len: usize): i32 { resetOutput(); return jpeg(ptr, len); }
export function jpegExtent(ptr: usize, len: usize): i32 { resetOutput(); return jpegOne(ptr, len); }
export function walkGif(ptr: usize, len: usize): i32 { resetOutput(); return gif(ptr, len, true); }
export function pdfEnd(ptr: usize, len: usize): i32 { resetOutput(); return pdfEof(ptr, len); }
export function pdfScanNames(ptr: usize, len: usize): i32 { resetOutput(); return pdfNames(ptr, len, 0); }
export function zipEnd(ptr: usize, len: usize): i32 { resetOutput(); return zip(ptr, len, true); }
export function scanSignatures(ptr: usize, len: usize, from: usize, to: usize): i32 { resetOutput(); return sigs(ptr, len, from, to); }
export function walkTiff(ptr: usize, len: usize): i32 { resetOutput(); return tiff(ptr, len); }
export function riffEnd(ptr: usize, len: usize): i32 { resetOutput(); return riff(ptr, len); }
export function bmpEnd(ptr: usize, len: usize): i32 { resetOutput(); return bmp(ptr, len); }
export function oggEnd(ptr: usize, len: usize): i32 { resetOutput(); return ogg(ptr, len); }
export function isoBmffEnd(ptr: usize, len: usize): i32 { resetOutput(); return isoBmff(ptr, len); }
export function mp4Location(ptr: usize, len: usize): i32 { resetOutput(); return mp4HasLocation(ptr, len); }
export function walkId3(ptr: usize, len: usize): i32 { resetOutput(); return id3(ptr, len); }
export function walkFlac(ptr: usize, len: usize): i32 { resetOutput(); return flac(ptr, len); }
export function entropyWindows(ptr: usize, len: usize, out: usize): f64 { resetOutput(); return windows(ptr, len, out); }
export function entropyOf(ptr: usize, len: usize): f64 { resetOutput(); return entropyRange(ptr, len); }
export function longestBase64Run(ptr: usize, len: usize): i32 { resetOutput(); return base64Run(ptr, len); }
export function lsbChannel(ptr: usize, width: u32, height: u32, channels: u32, channel: u32): f64 {
  resetOutput();
  return lsb(ptr, width, height, channels, channel);
}
export function chiSquareSurvival(df: f64, x: f64): f64 { return gammaQ(df * 0.5, x * 0.5); }
export function scanText(ptr: usize, len: usize, enc: i32, stopOnInvalid: bool): i32 { resetOutput(); return text(ptr, len, enc, stopOnInvalid); }
export function crc32(ptr: usize, len: usize): u32 { return crc(ptr, len, 0); }
