import { z } from 'zod';
import { DashboardUsage, DeliveryAnalytics, InvoiceRow, PlanPrice, Usage } from '../entities.ts';
import { operation } from '../operation.ts';
import { Permission } from '../permissions.ts';
import { empty, id, integer, isoDateTime, text } from '../validation.ts';

const Period = z.object({ from: isoDateTime(), to: isoDateTime() });
/** A period's delivery figures: the billed usage and what the edge's analytics count beside it. */
const DeliveryFigures = Usage.extend(DeliveryAnalytics.shape);
const TopEntry = z.object({
  key: z.string(),
  requests: z.number(),
  bytes: z.number(),
  savedBytes: z.number(),
});
const Month = z.object({ year: integer(2000, 2100), month: integer(1, 12) });

export const deliveryOperations = {
  'cache.lookup': operation('cache.lookup', {
    input: z.object({ originID: id(), url: text(4096).min(1, 'validation.required') }),
    output: z.object({ urls: z.array(z.string()) }),
    access: 'organization',
    permission: Permission.cache,
  }),
  'cache.delete': operation('cache.delete', {
    input: z.object({ originID: id(), url: text(4096).min(1, 'validation.required') }),
    output: z.object({ urls: z.array(z.string()) }),
    access: 'organization',
    permission: Permission.cache,
  }),
  /**
   * Removes every cached variant of every image of the origin whose path on the origin starts
   * with `pathPrefix` ('/': all of the origin's images), from every edge and the shared result
   * cache; `images` counts those the edges held (summed over edges).
   */
  'cache.purge_prefix': operation('cache.purge_prefix', {
    input: z.object({
      originID: id(),
      pathPrefix: text(4096)
        .trim()
        .min(1, 'validation.required')
        .refine((prefix) => prefix.startsWith('/'), 'validation.invalid'),
    }),
    output: z.object({ images: z.number() }),
    access: 'organization',
    permission: Permission.cache,
  }),
  /**
   * Delivery URLs for the preview tester: `paths` are what follows the host (parameters and
   * image path); each comes back as a full URL on the edge, signed when the origin signs.
   */
  'preview.urls': operation('preview.urls', {
    input: z.object({
      originID: id(),
      paths: z
        .array(
          text(4096)
            .min(1, 'validation.required')
            .refine((path) => path.startsWith('/'), 'validation.invalid'),
        )
        .min(1)
        .max(8),
    }),
    output: z.object({ urls: z.array(z.string()) }),
    access: 'organization',
    organizationKind: 'image',
  }),
  /**
   * Per origin and in total over [from, to): figures, a series per UTC day (and per hour when
   * asked, for at most 31 days), and the top 20 paths (by requests and by bytes),
   * transformations, output formats and error reasons, of every origin or of `originID` alone.
   */
  'statistics.origins': operation('statistics.origins', {
    input: Period.extend({
      granularity: z.enum(['day', 'hour']).default('day'),
      originID: id().optional(),
    }),
    output: z.object({
      origins: z.array(
        z.object({
          originID: z.number(),
          name: z.string(),
          stats: DeliveryFigures,
          daily: z.array(DeliveryFigures.extend({ day: z.string() })),
        }),
      ),
      total: DeliveryFigures,
      daily: z.array(DeliveryFigures.extend({ day: z.string() })),
      /** With granularity 'hour': every origin's (or `originID`'s) figures per UTC hour. */
      hourly: z.array(DeliveryFigures.extend({ hour: z.string() })).optional(),
      top: z.object({
        paths: z.array(TopEntry),
        pathsByBytes: z.array(TopEntry),
        transforms: z.array(TopEntry),
        formats: z.array(TopEntry),
        errors: z.array(TopEntry),
      }),
    }),
    access: 'organization',
    permission: Permission.statistics,
  }),
  /** Every plan's prices (plan_prices), for the plan page. */
  'plan.prices': operation('plan.prices', {
    input: empty(),
    output: z.object({ prices: z.array(PlanPrice) }),
    access: 'activated',
  }),
  'statistics.dashboard': operation('statistics.dashboard', {
    input: empty(),
    output: DashboardUsage,
    access: 'organization',
  }),
  'admin.statistics': operation('admin.statistics', {
    input: Month,
    output: z.object({
      organizations: z.array(
        Usage.extend({
          organizationID: z.number(),
          name: z.string(),
          memberCode: z.string(),
          serviceCode: z.string(),
        }),
      ),
    }),
    access: 'activated',
    adminOnly: true,
  }),
  'admin.invoices': operation('admin.invoices', {
    input: Month,
    output: z.object({ rows: z.array(InvoiceRow) }),
    access: 'activated',
    adminOnly: true,
  }),
};
