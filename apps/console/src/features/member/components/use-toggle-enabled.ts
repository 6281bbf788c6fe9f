import type { User } from '@ukiyo/contract';
import { useApiErrorHandler } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { useSetEnabled } from '@/features/member/api/member-api.ts';

/**
 * Enables a disabled member or disables an enabled one, and says so in the flash (or why not):
 * the member list's row button and the member page's status card.
 */
export function useToggleEnabled() {
  const handleError = useApiErrorHandler();
  const setEnabled = useSetEnabled();
  const toggle = async (user: User) => {
    try {
      await setEnabled.mutateAsync({ emailAddress: user.emailAddress, enabled: !user.enabled });
      flash.now({
        variant: 'success',
        key: user.enabled ? 'member.disabledMessage' : 'member.enabledMessage',
        params: { email: user.emailAddress },
        action: 'member',
      });
    } catch (error) {
      handleError(error, { action: 'member' });
    }
  };
  return { toggle, pending: setEnabled.isPending, pendingEmail: setEnabled.variables?.emailAddress };
}
