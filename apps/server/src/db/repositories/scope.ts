/**
 * Who is asking: every repository query over tenant data takes one, and filters by it, so an
 * organization's data is reachable only by its members (and administrators).
 */
export interface Scope {
  userId: number;
  isAdmin: boolean;
  /** The customer account the user belongs to; null for provider staff. */
  accountId: number | null;
  /** Organizations the user is limited to; empty means every organization of the account. */
  restrictedTo: readonly number[];
}
