import { useSyncExternalStore } from 'react';
import type { Organization, User } from '@ukiyo/contract';

/**
 * Who is logged in and in which organization. The root loader refreshes it on every navigation
 * (user.whoami), so components read it synchronously instead of each asking the server.
 */
export interface Session {
  user: User | null;
  organization: Organization | null;
}

const LOGGED_OUT: Session = { user: null, organization: null };

let current: Session = LOGGED_OUT;
const listeners = new Set<() => void>();

export function getSession(): Session {
  return current;
}

export function setSession(next: Session): void {
  current = { user: next.user, organization: next.organization };
  listeners.forEach((listener) => listener());
}

export function clearSession(): void {
  setSession(LOGGED_OUT);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useSession(): Session {
  return useSyncExternalStore(subscribe, getSession, getSession);
}

/** The spec's "logged in": a user with a real ID. */
export function isLoggedIn(user: User | null): user is User {
  return user !== null && user.userID > 0;
}

export function isActivated(user: User | null): boolean {
  return isLoggedIn(user) && user.activatedAt !== null;
}
