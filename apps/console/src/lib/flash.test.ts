import { describe, expect, it } from 'vitest';
import { createFlashStore, variantForKey } from './flash.ts';

const keys = (messages: readonly { key?: string }[]) => messages.map((message) => message.key);

describe('flash', () => {
  it('shows `now` messages at once and clears them on the next route change', () => {
    const flash = createFlashStore();
    flash.now('error.internal');
    expect(keys(flash.current())).toEqual(['error.internal']);
    flash.advance();
    expect(flash.current()).toEqual([]);
  });

  it('keeps `next` messages for the page after the route change, then drops them', () => {
    const flash = createFlashStore();
    flash.now('error.internal');
    flash.next({ key: 'limit.notEnoughPermission' });
    expect(keys(flash.current())).toEqual(['error.internal']);
    flash.advance();
    expect(keys(flash.current())).toEqual(['limit.notEnoughPermission']);
    flash.advance();
    expect(flash.current()).toEqual([]);
  });

  it('takes its style from the key unless one is given', () => {
    const flash = createFlashStore();
    flash.now('error.sessionInvalid');
    flash.now('limit.imageNotAvailable');
    flash.now('updatePassword.success');
    flash.now({ text: 'plain' });
    flash.now({ key: 'error.internal', variant: 'warning' });
    expect(flash.current().map((message) => message.variant)).toEqual([
      'danger',
      'warning',
      'success',
      'info',
      'warning',
    ]);
    expect(variantForKey('validation.required')).toBe('danger');
  });

  it('shows the same message once and can dismiss one', () => {
    const flash = createFlashStore();
    flash.now({ key: 'error.originNotFound', params: { id: 3 } });
    flash.now({ key: 'error.originNotFound', params: { id: 3 } });
    flash.now({ key: 'error.originNotFound', params: { id: 4 } });
    expect(flash.current()).toHaveLength(2);
    flash.dismiss(flash.current()[0]!.id);
    expect(flash.current().map((message) => message.params)).toEqual([{ id: 4 }]);
  });

  it('replaces the earlier message of the same action', () => {
    const flash = createFlashStore();
    flash.now({ key: 'token.disabled', variant: 'success', action: 'token' });
    flash.now({ key: 'token.deleted', variant: 'success', action: 'token' });
    expect(keys(flash.current())).toEqual(['token.deleted']);
    flash.now({ key: 'error.tokenDeleteFailed', action: 'token' });
    expect(keys(flash.current())).toEqual(['error.tokenDeleteFailed']);
  });

  it('never shows a success and a failure of different actions together: the later stays', () => {
    const flash = createFlashStore();
    flash.now({ key: 'account.profileUpdated', variant: 'success', action: 'profile' });
    flash.now({ key: 'error.internal', action: 'password' });
    expect(keys(flash.current())).toEqual(['error.internal']);
    flash.now({ key: 'common.copied', variant: 'success', action: 'copy' });
    expect(keys(flash.current())).toEqual(['common.copied']);
    // Successes of different actions are both true.
    flash.now({ key: 'account.passwordChanged', variant: 'success', action: 'password' });
    expect(keys(flash.current())).toEqual(['common.copied', 'account.passwordChanged']);
  });

  it('keeps what the page says about itself, whatever the user does later', () => {
    const flash = createFlashStore();
    flash.next('limit.notEnoughPermission');
    flash.advance();
    flash.now('error.internal');
    flash.now({ key: 'common.copied', variant: 'success', action: 'copy' });
    expect(keys(flash.current())).toEqual(['limit.notEnoughPermission', 'error.internal', 'common.copied']);
  });

  it('applies the rule to a message carried to the next page', () => {
    const flash = createFlashStore();
    flash.next({ key: 'member.updated', variant: 'success', action: 'member' });
    flash.advance();
    flash.now({ key: 'member.disabledMessage', variant: 'success', action: 'member' });
    expect(keys(flash.current())).toEqual(['member.disabledMessage']);
  });

  it('tells subscribers about what they can see', () => {
    const flash = createFlashStore();
    let calls = 0;
    const unsubscribe = flash.subscribe(() => (calls += 1));
    flash.next('error.internal');
    expect(calls).toBe(0);
    flash.advance();
    flash.now('error.internal');
    expect(calls).toBe(2);
    unsubscribe();
    flash.advance();
    expect(calls).toBe(2);
  });
});
