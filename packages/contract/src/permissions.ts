/** Permission bit flags (console-spec section 3). Administrators pass every check. */
export const Permission = {
  admin: 1,
  channel: 2,
  cache: 4,
  statistics: 8,
  member: 16,
  origin: 32,
  organization: 64,
} as const;

export type PermissionName = keyof typeof Permission;
export type PermissionBit = (typeof Permission)[PermissionName];

export const ALL_PERMISSIONS = Object.values(Permission).reduce((mask, bit) => mask | bit, 0);
/** Every bit but administrator: what "all permissions" means inside an organization. */
export const ALL_MEMBER_PERMISSIONS = ALL_PERMISSIONS & ~Permission.admin;

export function isAdministrator(mask: number): boolean {
  return (mask & Permission.admin) !== 0;
}

/** True when the mask grants every bit of `required` (administrators pass every check). */
export function hasPermission(mask: number, required: number): boolean {
  return isAdministrator(mask) || (mask & required) === required;
}

/**
 * API tokens hold a flag when their mask is unset (null: everything the organization allows),
 * has the flag, or has the administrator flag (console-spec section 6).
 */
export function tokenHasPermission(mask: number | null, required: number): boolean {
  return mask === null || hasPermission(mask, required);
}

/** Permission groups of API tokens, in display order. */
export const TOKEN_PERMISSION_GROUPS = [
  ['statistics', Permission.statistics],
  ['cache', Permission.cache],
  ['live', Permission.channel],
  ['admin', Permission.admin],
  ['member', Permission.member],
  ['origin', Permission.origin],
  ['org', Permission.organization],
] as const;
