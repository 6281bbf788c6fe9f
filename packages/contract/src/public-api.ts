import { z } from 'zod';

/**
 * The public, token-authenticated API on PORT under /api (delivery-url.md section 6). Its
 * OpenAPI document (/api/openapi.json) is generated from these schemas.
 */
export const PublicCacheRequest = z.object({
  /** An image URL of one of the token's origins (`https://{origin host}/{params}/{path}`) or its path. */
  url: z.string().trim().min(1).max(4096),
});

export const PublicCacheResponse = z.object({
  /** The call succeeded; not that something was cached. */
  ok: z.boolean(),
  error: z.string().optional(),
  /** The cached variants of that image (lookup) or those removed (delete). */
  urls: z.array(z.string()),
});

export const PublicPurgeResponse = z.object({
  ok: z.boolean(),
  error: z.string().optional(),
  /** Images whose cached variants were removed, summed over the edges that held them. */
  images: z.number(),
});

export const TokenInfoResponse = z.object({
  ok: z.literal(true),
  organizationID: z.number(),
  /** null: every permission (the token's mask is unset). */
  permission: z.number().nullable(),
});

export const PublicErrorResponse = z.object({ ok: z.literal(false), error: z.string() });
