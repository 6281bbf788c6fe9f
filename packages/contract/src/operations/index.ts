import { accountOperations } from './account.ts';
import { authOperations } from './auth.ts';
import { deliveryOperations } from './delivery.ts';
import { jobOperations } from './jobs.ts';
import { organizationOperations } from './organization.ts';
import { originOperations } from './origin.ts';
import { userOperations } from './user.ts';

/** Every /.ui-api operation, by name. The dispatcher and the console's client derive from this. */
export const operations = {
  ...authOperations,
  ...organizationOperations,
  ...userOperations,
  ...originOperations,
  ...deliveryOperations,
  ...accountOperations,
  ...jobOperations,
};

export type Operations = typeof operations;
export type OperationName = keyof Operations;

export function isOperationName(name: string): name is OperationName {
  return Object.hasOwn(operations, name);
}
