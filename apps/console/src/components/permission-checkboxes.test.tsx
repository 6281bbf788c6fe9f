import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Permission } from '@ukiyo/contract';
import '@/lib/i18n.ts';
import { PermissionCheckboxes } from './permission-checkboxes.tsx';

afterEach(cleanup);

const box = (name: string) => screen.getByTestId(`perm-${name}`) as HTMLInputElement;

describe('PermissionCheckboxes', () => {
  it('enables only what the actor may grant and hides the administrator bit from members', () => {
    render(
      <PermissionCheckboxes
        value={Permission.origin}
        onChange={() => undefined}
        grantable={Permission.member | Permission.cache}
        testId="perm"
      />,
    );
    expect(box('cache').disabled).toBe(false);
    expect(box('statistics').disabled).toBe(true);
    // Held by the edited user but not by the actor: it can still be cleared.
    expect(box('origin').checked).toBe(true);
    expect(box('origin').disabled).toBe(false);
    expect(screen.queryByTestId('perm-admin')).toBeNull();
  });

  it('reports the mask with the toggled bit', () => {
    const onChange = vi.fn();
    render(
      <PermissionCheckboxes value={Permission.member} onChange={onChange} grantable={127} testId="perm" />,
    );
    fireEvent.click(box('cache'));
    expect(onChange).toHaveBeenCalledWith(Permission.member | Permission.cache);
    fireEvent.click(box('member'));
    expect(onChange).toHaveBeenLastCalledWith(0);
    expect(box('admin').disabled).toBe(false);
  });
});
