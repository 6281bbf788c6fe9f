import {
  ALL_PERMISSIONS,
  isAdministrator,
  Permission,
  TOKEN_PERMISSION_GROUPS,
  type PermissionName,
} from '@ukiyo/contract';

/**
 * Member permission bits in the order the console lists them: what a member works on first,
 * organization settings after, the administrator flag last (only administrators see it set).
 */
export const MEMBER_PERMISSIONS: readonly (readonly [PermissionName, number])[] = [
  ['channel', Permission.channel],
  ['cache', Permission.cache],
  ['statistics', Permission.statistics],
  ['member', Permission.member],
  ['origin', Permission.origin],
  ['organization', Permission.organization],
  ['admin', Permission.admin],
];

/**
 * The bits an actor may set on a user, as the server decides (apps/server services/accounts.ts
 * assertGrantable): the bits they hold, all of them for administrators, the administrator bit
 * only for administrators; on oneself (`ownCurrent`) bits may be dropped but never regained.
 */
export function grantableMask(actorPermission: number, ownCurrent?: number): number {
  const held = isAdministrator(actorPermission) ? ALL_PERMISSIONS : actorPermission & ~Permission.admin;
  return ownCurrent === undefined ? held : held & ownCurrent;
}

/**
 * One checkbox of a permission mask. A bit the actor may not grant can still be cleared when the
 * edited user already has it (the server refuses the whole mask while it stays), but once cleared
 * it cannot be set again.
 */
export function bitCheckbox(
  mask: number,
  bit: number,
  grantable: number,
): { checked: boolean; disabled: boolean } {
  const checked = (mask & bit) !== 0;
  return { checked, disabled: !checked && (grantable & bit) === 0 };
}

export function withBit(mask: number, bit: number, on: boolean): number {
  return on ? mask | bit : mask & ~bit;
}

/** The names of the member permissions a mask holds, in display order. */
export function memberPermissionNames(mask: number): PermissionName[] {
  return MEMBER_PERMISSIONS.filter(([, bit]) => (mask & bit) !== 0).map(([name]) => name);
}

export type TokenGroupName = (typeof TOKEN_PERMISSION_GROUPS)[number][0];

/** A token's permission groups for display; null when the token holds every permission. */
export function tokenGroupNames(mask: number | null): TokenGroupName[] | null {
  if (mask === null) return null;
  return TOKEN_PERMISSION_GROUPS.filter(([, bit]) => (mask & bit) !== 0).map(([name]) => name);
}

/**
 * The groups a new token may carry: what its creator holds (the server refuses more), the
 * administrator group only for administrators.
 */
export function tokenGrantableMask(actorPermission: number): number {
  return isAdministrator(actorPermission) ? ALL_PERMISSIONS : actorPermission & ~Permission.admin;
}
