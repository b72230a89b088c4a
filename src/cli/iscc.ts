// `provenant iscc FILE [--json]`: the file's ISCC (ISO 24138) as the ISCC SDK makes it
// without a Meta-Code: the ISCC-CODE, its Content-Code (image, audio, video or text;
// none for other files), Data-Code, Instance-Code, the BLAKE3 datahash and the size
// (src/media/iscc.ts, docs/iscc.md).
import { isccOfFile, type IsccFileResult } from '../media/iscc.js';
import { fileCommand } from './file-command.js';

export const run = fileCommand('iscc', async (file: string): Promise<{ file: string } & IsccFileResult> => ({ file, ...(await isccOfFile(file)) }), (r) => [
  `${r.iscc}  ${r.file}`,
  ...(r.content ? [`  content   ${r.content.code}  (${r.content.kind})`] : ['  content   none (not an image, audio, video or text file)']),
  `  data      ${r.data}`,
  `  instance  ${r.instance}`,
  `  datahash  ${r.datahash}`,
  `  filesize  ${r.filesize}`,
]);
