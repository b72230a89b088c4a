// The memory limit of every process that decodes a stranger's file: the image sandbox
// (sandbox.ts) and each ffmpeg run (ffmpeg.ts) alike, PROVENANT_DECODER_MEMORY_MB on a
// server. The process is started through /bin/sh, which sets RLIMIT_DATA (`ulimit -d`,
// in KiB) and then becomes the decoder (exec: same pid, same pipes and IPC channel).
// Since Linux 4.7 RLIMIT_DATA counts every private writable mapping, so it bounds what
// a decoder allocates with malloc and mmap, thread stacks, WebAssembly memory and V8's
// heap alike; an allocation past it fails (ENOMEM), and the decoder reports an error or
// dies: that file only. A hard limit already lower is kept (ulimit fails; that limit
// still holds). Not on Windows, which has no such limit: there the process runs unlimited.

/**
 * The default limit, in MB: what the largest accepted image needs with room to spare
 * (a 100-megapixel RGBA PNG, 16 bits deep, peaks at about 890 MB: 400 MB of 8-bit
 * pixels from libvips plus their copy in the kernel's memory); ffmpeg's decodes of
 * accepted files peak under 100 MB (docs/media.md).
 */
export const DECODER_DEFAULT_MEMORY_MB = 1280;

/**
 * The shell script that applies a limit of `mb` and execs "$0" "$@": run it as
 * `/bin/sh -c <script> <program> <args...>`. Null when no limit applies (none asked, or Windows).
 */
export function memoryLimitScript(mb: number | null): string | null {
  if (mb === null || process.platform === 'win32') return null;
  return `ulimit -d ${Math.round(mb * 1024)} 2>/dev/null; exec "$0" "$@"`;
}
