import { authHandlers } from './auth.ts';
import type { Handlers } from './context.ts';

/** Every implemented operation; the contract's others answer 'not implemented'. */
export const handlers: Handlers = {
  ...authHandlers,
};
