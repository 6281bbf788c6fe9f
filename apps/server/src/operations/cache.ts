import { AppError } from '../http/app-error.ts';
import { originOfUrl } from '../services/cache.ts';
import { organizationOf, type Handlers, type OperationContext } from './context.ts';

async function variants(context: OperationContext, originID: number, url: string, remove: boolean) {
  const originId = await originOfUrl(context.deps.db, organizationOf(context).id, url, originID);
  if (originId === undefined) throw new AppError('origin not found', { params: { id: originID } });
  const control = context.deps.cacheControl;
  if (!control) throw new AppError('cache unavailable');
  return { urls: remove ? await control.purge(originId, url) : await control.lookup(originId, url) };
}

export const cacheHandlers: Handlers = {
  'cache.lookup': ({ originID, url }, context) => variants(context, originID, url, false),
  'cache.delete': ({ originID, url }, context) => variants(context, originID, url, true),
};
