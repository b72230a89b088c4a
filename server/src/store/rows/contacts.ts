// Contact queue rows as both engines read them, and their mapping to the store's value.
// No SQL here: the queries stay in each engine.
import type { NewContactRequest, QueuedContactRequest } from '../types.js';

export interface ContactRow {
  id: number;
  signer_agent_key: string;
  file_hash: string | null;
  sender_name: string;
  sender_email: string;
  message: string;
  purpose: NewContactRequest['purpose'];
  created_at: number;
  attempts: number;
}

export const toRequest = (r: ContactRow): QueuedContactRequest => ({
  id: r.id,
  signerAgentKey: r.signer_agent_key,
  fileHash: r.file_hash,
  senderName: r.sender_name,
  senderEmail: r.sender_email,
  message: r.message,
  purpose: r.purpose,
  createdAt: r.created_at,
  attempts: r.attempts,
});
