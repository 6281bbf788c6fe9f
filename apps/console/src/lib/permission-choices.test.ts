import { describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS, Permission } from '@ukiyo/contract';
import {
  bitCheckbox,
  grantableMask,
  memberPermissionNames,
  tokenGrantableMask,
  tokenGroupNames,
  withBit,
} from './permission-choices.ts';

const { admin, channel, cache, statistics, member, origin, organization } = Permission;

describe('grantableMask', () => {
  it('gives administrators every bit, the administrator bit included', () => {
    expect(grantableMask(admin)).toBe(ALL_PERMISSIONS);
  });

  it('limits members to the bits they hold, never the administrator bit', () => {
    expect(grantableMask(member | cache)).toBe(member | cache);
    // A corrupt mask cannot smuggle the bit in either: it is the administrator check's job.
    expect(grantableMask(member | cache) & admin).toBe(0);
  });

  it('on oneself, only keeps or drops what one has', () => {
    expect(grantableMask(member | cache | origin, member | cache)).toBe(member | cache);
    expect(grantableMask(admin, admin | member)).toBe(admin | member);
  });
});

describe('bitCheckbox', () => {
  const grantable = member | cache;
  it('enables held bits', () => {
    expect(bitCheckbox(0, cache, grantable)).toEqual({ checked: false, disabled: false });
    expect(bitCheckbox(cache, cache, grantable)).toEqual({ checked: true, disabled: false });
  });

  it('lets a bit the actor lacks be cleared but not set again', () => {
    expect(bitCheckbox(origin, origin, grantable)).toEqual({ checked: true, disabled: false });
    expect(bitCheckbox(0, origin, grantable)).toEqual({ checked: false, disabled: true });
  });
});

describe('withBit', () => {
  it('sets and clears one bit', () => {
    expect(withBit(member, cache, true)).toBe(member | cache);
    expect(withBit(member | cache, cache, false)).toBe(member);
    expect(withBit(member, cache, false)).toBe(member);
  });
});

describe('memberPermissionNames', () => {
  it('lists bits in display order, administrator last', () => {
    expect(memberPermissionNames(admin | organization | channel | statistics)).toEqual([
      'channel',
      'statistics',
      'organization',
      'admin',
    ]);
    expect(memberPermissionNames(0)).toEqual([]);
  });
});

describe('token permissions', () => {
  it('reads null as every permission', () => {
    expect(tokenGroupNames(null)).toBeNull();
  });

  it('names the groups of a mask in the contract order', () => {
    expect(tokenGroupNames(channel | statistics | organization)).toEqual(['statistics', 'live', 'org']);
    expect(tokenGroupNames(0)).toEqual([]);
  });

  it('lets a token carry what its creator holds', () => {
    expect(tokenGrantableMask(cache | statistics)).toBe(cache | statistics);
    expect(tokenGrantableMask(admin)).toBe(ALL_PERMISSIONS);
  });
});
