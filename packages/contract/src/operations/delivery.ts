import { z } from 'zod';
import { DashboardUsage, InvoiceRow, Usage } from '../entities.ts';
import { operation } from '../operation.ts';
import { Permission } from '../permissions.ts';
import { empty, id, integer, isoDateTime, text } from '../validation.ts';

const Period = z.object({ from: isoDateTime(), to: isoDateTime() });
const DailyUsage = Usage.extend({ day: z.string() });
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
  'statistics.origins': operation('statistics.origins', {
    input: Period,
    output: z.object({
      origins: z.array(
        z.object({ originID: z.number(), name: z.string(), stats: Usage, daily: z.array(DailyUsage) }),
      ),
      total: Usage,
      daily: z.array(DailyUsage),
    }),
    access: 'organization',
    permission: Permission.statistics,
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
