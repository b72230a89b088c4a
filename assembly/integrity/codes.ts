// Record codes of the output block (output.ts). Mirrored in src/lib/integrity.ts
// (IntegrityCode); keep both lists in the same order.

// Structure walks
export const PNG_BAD_SIGNATURE: i32 = 1;
export const PNG_TRUNCATED: i32 = 2;      // offset: where the walk stopped
export const PNG_CRC_MISMATCH: i32 = 3;   // aux: chunk type, offset/length: the chunk
export const PNG_CHUNK: i32 = 4;          // aux: type of an ancillary or unknown chunk, offset/length: its data
export const PNG_IHDR: i32 = 5;           // value: colour type, value2: bit depth
export const JPEG_BAD_SIGNATURE: i32 = 10;
export const JPEG_TRUNCATED: i32 = 11;    // offset: where the walk stopped
export const JPEG_BAD_MARKER: i32 = 12;   // offset: where a marker was expected
export const JPEG_SEGMENT: i32 = 13;      // aux: marker (0xE0-0xEF, 0xFE), offset/length: segment data
export const JPEG_FIRST_EOI: i32 = 14;    // offset: end of the primary image
export const JPEG_MPF_IMAGE: i32 = 15;    // offset/length: a secondary image named by MPF; value: 1 walked, 0 not
export const GIF_BAD_SIGNATURE: i32 = 20;
export const GIF_TRUNCATED: i32 = 21;
export const GIF_BAD_BLOCK: i32 = 22;     // offset: an unknown block introducer
export const GIF_EXTENSION: i32 = 23;     // aux: label (0xFE comment, 0xFF application), offset/length: the block
export const PDF_NO_EOF: i32 = 30;
export const PDF_NAME: i32 = 31;          // aux: PDF_NAME_* kind, offset/length: the name token
export const ZIP_EOCD: i32 = 40;          // offset: EOCD, length: 22 + comment; value: estimated archive start
export const ZIP_NO_EOCD: i32 = 41;
export const SIGNATURE: i32 = 50;         // aux: SIG_* kind, offset: where the signature starts
export const EXIF_GPS: i32 = 60;          // value: latitude, value2: longitude (NaN when only a partial position)
export const EXIF_THUMBNAIL: i32 = 61;    // offset/length: JPEG thumbnail, relative to the TIFF header
export const EXIF_BAD: i32 = 62;          // offset: where the IFD walk broke
export const EXIF_TAG: i32 = 63;          // aux: a notable tag (XMP 700, IPTC 33723, Photoshop 34377), offset/length: its data
export const CONTAINER_END: i32 = 70;     // offset: end of a RIFF/BMP/Ogg/ISO-BMFF/TIFF structure
export const CONTAINER_BAD: i32 = 71;     // offset: where a container walk broke
export const ID3_FRAME: i32 = 72;         // aux: frame id (4 bytes BE), offset/length: frame data
export const FLAC_BLOCK: i32 = 73;        // aux: block type, offset/length: block data
// Text
export const TEXT_ZERO_WIDTH: i32 = 80;   // aux: code point, offset; value: 1 explained by context
export const TEXT_TAG: i32 = 81;          // aux: code point; value: 1 explained (emoji tag sequence)
export const TEXT_VARIATION: i32 = 82;    // aux: code point; value: 1 explained
export const TEXT_BIDI: i32 = 83;         // aux: code point
export const TEXT_CONFUSABLE: i32 = 84;   // offset/length: the word; aux: scripts bitmask
export const TEXT_TRAILING_WS: i32 = 85;  // offset/length: the whitespace run; aux: 1 if mixed tabs/spaces
export const TEXT_INVALID: i32 = 86;      // offset: first invalid sequence

// PDF name kinds
export const PDF_NAME_JAVASCRIPT: i32 = 1;
export const PDF_NAME_JS: i32 = 2;
export const PDF_NAME_LAUNCH: i32 = 3;
export const PDF_NAME_EMBEDDED_FILE: i32 = 4;
export const PDF_NAME_OPEN_ACTION: i32 = 5;
export const PDF_NAME_AA: i32 = 6;
export const PDF_NAME_OBJSTM: i32 = 7;

// Signature kinds
export const SIG_PNG: i32 = 1;
export const SIG_JPEG: i32 = 2;
export const SIG_GIF: i32 = 3;
export const SIG_ZIP: i32 = 4;
export const SIG_PDF: i32 = 5;
export const SIG_RAR: i32 = 6;
export const SIG_7Z: i32 = 7;
export const SIG_GZIP: i32 = 8;
export const SIG_ELF: i32 = 9;
export const SIG_PE: i32 = 10;
