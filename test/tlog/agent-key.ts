// The public key inside a `uhCAk...` agent key, read here without the library: 'u', then
// base64url of 0x84 0x20 0x24, the 32-byte Ed25519 key and 4 location bytes.
export function agentKeyPublicBytes(agentKey: string): Buffer {
  if (!agentKey.startsWith('u')) throw new Error('not an agent key');
  const bytes = Buffer.from(agentKey.slice(1), 'base64url');
  if (bytes.length !== 39 || bytes[0] !== 0x84 || bytes[1] !== 0x20 || bytes[2] !== 0x24) throw new Error('not an agent key');
  return bytes.subarray(3, 35);
}
