import { useState } from 'react';

/**
 * A question before acting on one item of a list (delete this member, this channel): which item
 * is asked about, and the props that show and close a `ConfirmModal` for it. `confirm` runs the
 * page's action on that item and closes the question whatever the outcome; the action reports its
 * own failure.
 */
export function useConfirmation<T>() {
  const [target, setTarget] = useState<T | null>(null);
  const cancel = () => setTarget(null);
  return {
    target,
    ask: (item: T) => setTarget(item),
    cancel,
    confirm: async (action: (item: T) => Promise<void>) => {
      if (target === null) return;
      try {
        await action(target);
      } finally {
        setTarget(null);
      }
    },
    modal: { show: target !== null, onCancel: cancel },
  };
}
