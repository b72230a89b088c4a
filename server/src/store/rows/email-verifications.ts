// The e-mail verification row both engines read when a link is used (the link's columns
// and the user's current address). No SQL here: the query stays in each engine.
export interface VerificationRow {
  user_id: string;
  email: string;
  expires_at: number;
  used_at: number | null;
  current_email: string | null;
}
