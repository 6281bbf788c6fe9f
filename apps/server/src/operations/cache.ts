import { AppError } from '../http/app-error.ts';
import { originOfUrl } from '../services/cache.ts';
import { organizationOf, type Handlers, type OperationContext } from './context.ts';

/** The edges' cache and the organization's origin `url` (a URL or a path) names. */
async function cacheOf(context: OperationContext, originID: number, url: string) {
  const originId = await originOfUrl(context.deps.db, organizationOf(context).id, url, originID);
  if (originId === undefined) throw new AppError('origin not found', { params: { id: originID } });
  const control = context.deps.cacheControl;
  if (!control) throw new AppError('cache unavailable');
  return { control, originId };
}

async function variants(context: OperationContext, originID: number, url: string, remove: boolean) {
  const { control, originId } = await cacheOf(context, originID, url);
  return { urls: remove ? await control.purge(originId, url) : await control.lookup(originId, url) };
}

export const cacheHandlers: Handlers = {
  'cache.lookup': ({ originID, url }, context) => variants(context, originID, url, false),
  'cache.delete': ({ originID, url }, context) => variants(context, originID, url, true),
  'cache.purge_prefix': async ({ originID, pathPrefix }, context) => {
    const { control, originId } = await cacheOf(context, originID, pathPrefix);
    return { images: await control.purgePrefix(originId, pathPrefix) };
  },
};
