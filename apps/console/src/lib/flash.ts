import { useSyncExternalStore } from 'react';

/**
 * One-shot messages (console-spec sections 2 and 4): `now` shows on the current page, `next`
 * waits for the next route change. Each route change drops what is shown and promotes what
 * was waiting, so a message set just before a redirect appears on the page redirected to.
 *
 * A message that reports what the user just did names that `action`. The page then tells one
 * story: a new message replaces the earlier one of the same action (a retry's success its
 * failure, "deleted" the "disabled" before it), and a success and a failure of different
 * actions never stand side by side (the later one stays). Messages without an action describe
 * the page itself (it could not load, the route was refused) and stay until the route changes:
 * what the user does later does not make them less true, which is why the rule keys on the
 * action and not on the message's style.
 */
export type FlashVariant = 'success' | 'danger' | 'warning' | 'info';

export interface FlashInput {
  variant?: FlashVariant;
  /** A message key (translated with `params`), or ready `text`; one of them is needed. */
  key?: string;
  text?: string;
  params?: Record<string, string | number>;
  /**
   * What the user did that this message reports on, named by what it acts on ('token' for a
   * token's disabling and deleting alike, 'copy', 'profile'); see the rule above.
   */
  action?: string;
}

export interface FlashMessage extends FlashInput {
  id: number;
  variant: FlashVariant;
}

/** The style follows the key when the caller does not choose one. */
export function variantForKey(key: string | undefined): FlashVariant {
  if (key === undefined) return 'info';
  if (key.startsWith('error.') || key.startsWith('validation.')) return 'danger';
  if (key.startsWith('limit.')) return 'warning';
  if (key.startsWith('success.') || key.endsWith('.success')) return 'success';
  return 'info';
}

const EMPTY: readonly FlashMessage[] = [];

export function createFlashStore() {
  let shown: readonly FlashMessage[] = EMPTY;
  let waiting: readonly FlashMessage[] = EMPTY;
  let lastID = 0;
  const listeners = new Set<() => void>();
  const emit = () => listeners.forEach((listener) => listener());

  const toMessage = (input: FlashInput | string): FlashMessage => {
    const message = typeof input === 'string' ? { key: input } : input;
    lastID += 1;
    return { ...message, id: lastID, variant: message.variant ?? variantForKey(message.key) };
  };
  const sameAs = (a: FlashMessage) => (b: FlashMessage) =>
    a.variant === b.variant &&
    a.key === b.key &&
    a.text === b.text &&
    JSON.stringify(a.params ?? {}) === JSON.stringify(b.params ?? {});
  const isFailure = (message: FlashMessage) => message.variant === 'danger' || message.variant === 'warning';
  // Two outcomes of different actions contradict when one says it worked and the other it did not.
  const contradicts = (a: FlashMessage, b: FlashMessage) =>
    (a.variant === 'success' && isFailure(b)) || (isFailure(a) && b.variant === 'success');
  const supersedes = (message: FlashMessage, earlier: FlashMessage) =>
    message.action !== undefined &&
    earlier.action !== undefined &&
    (earlier.action === message.action || contradicts(earlier, message));
  const append = (list: readonly FlashMessage[], message: FlashMessage) => {
    const kept = list.filter((earlier) => !supersedes(message, earlier));
    // The same failure reported twice (a retried navigation, a double click) shows once.
    return kept.some(sameAs(message)) ? kept : [...kept, message];
  };

  return {
    now(input: FlashInput | string): void {
      shown = append(shown, toMessage(input));
      emit();
    },
    next(input: FlashInput | string): void {
      waiting = append(waiting, toMessage(input));
    },
    /** A route change: what was shown goes, what was waiting is shown. */
    advance(): void {
      if (shown.length === 0 && waiting.length === 0) return;
      shown = waiting;
      waiting = EMPTY;
      emit();
    },
    dismiss(id: number): void {
      shown = shown.filter((message) => message.id !== id);
      emit();
    },
    current(): readonly FlashMessage[] {
      return shown;
    },
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type FlashStore = ReturnType<typeof createFlashStore>;

export const flash = createFlashStore();

export function useFlashMessages(): readonly FlashMessage[] {
  return useSyncExternalStore(flash.subscribe, flash.current, flash.current);
}
