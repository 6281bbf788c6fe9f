import { useEffect, useLayoutEffect } from 'react';
import { useLocation, useNavigationType } from 'react-router';

const HASH_TRIES = 50;
const HASH_INTERVAL_MS = 100;

/** Scroll positions by history entry, so back and forward return to where the user was. */
const positions = new Map<string, number>();

function scrollToElement(id: string): boolean {
  const element = document.getElementById(id);
  element?.scrollIntoView();
  return element !== null;
}

/**
 * Scroll on navigation (console-spec section 2): the saved position of a history entry on
 * back/forward, else the #hash target, else the top. A hash target may be rendered only once
 * the page's data arrives, hence the retries.
 */
export function useScrollOnNavigation(): void {
  const { key, hash } = useLocation();
  const navigationType = useNavigationType();

  useEffect(() => {
    window.history.scrollRestoration = 'manual';
  }, []);

  useEffect(() => {
    const save = () => positions.set(key, window.scrollY);
    window.addEventListener('scroll', save, { passive: true });
    return () => window.removeEventListener('scroll', save);
  }, [key]);

  useLayoutEffect(() => {
    const saved = navigationType === 'POP' ? positions.get(key) : undefined;
    if (saved !== undefined) {
      window.scrollTo(0, saved);
      return;
    }
    window.scrollTo(0, 0);
    if (hash.length <= 1) return;
    let target: string;
    try {
      target = decodeURIComponent(hash.slice(1));
    } catch {
      return;
    }
    if (scrollToElement(target)) return;
    let tries = 1;
    const timer = window.setInterval(() => {
      tries += 1;
      if (scrollToElement(target) || tries >= HASH_TRIES) window.clearInterval(timer);
    }, HASH_INTERVAL_MS);
    return () => window.clearInterval(timer);
  }, [key, hash, navigationType]);
}
