import { OriginKind, SAMPLE_ORIGIN_HOST, SAMPLES_SERVICE_CODE } from '@ukiyo/contract';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { createOrganization, createSakuraAccount } from '../db/repositories/organizations.ts';
import { insertOrigin, type OriginValues } from '../db/repositories/origins.ts';
import { generateOriginName } from './origins.ts';

export const DEMO_SERVICE_CODE = 'demo-image';

/** An HTTP origin over the edge's bundled sample images (apps/edge/samples). */
function sampleOriginValues(name: string, description: string): OriginValues {
  return {
    kind: OriginKind.http,
    originName: name,
    enableSignedUrl: false,
    signingSecretEnc: '',
    defaultCache: 86400,
    enableClientHints: false,
    allowSvg: false,
    description,
    config: { scheme: 'http', host: SAMPLE_ORIGIN_HOST, pathPrefix: '', rewriteHost: '' },
    acl: { isAllowList: false, cidrs: [] },
    overridableParameters: '',
  };
}

async function organizationByServiceCode(db: Db, serviceCode: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('organizations')
    .select('id')
    .where('service_code', '=', serviceCode)
    .executeTakeFirst();
  return row?.id;
}

async function ensureOrganization(
  db: Db,
  serviceCode: string,
  values: { memberCode: string; accountName: string; name: string; description: string },
): Promise<{ id: number; created: boolean }> {
  const existing = await organizationByServiceCode(db, serviceCode);
  if (existing !== undefined) return { id: existing, created: false };
  const create = db.transaction().execute(async (trx) => {
    const accountId = await createSakuraAccount(trx, {
      memberCode: values.memberCode,
      name: values.accountName,
    });
    return createOrganization(trx, {
      accountId,
      name: values.name,
      serviceCode,
      plan: 4,
      description: values.description,
    });
  });
  try {
    return { id: await create, created: true };
  } catch (error) {
    // Processes starting together race to create it; the loser uses the winner's.
    const winner = await organizationByServiceCode(db, serviceCode);
    if (winner === undefined) throw error;
    return { id: winner, created: false };
  }
}

/** The guest preview's origin is `samples.{EDGE_DOMAIN}` (generated names are 12 characters long). */
export function guestOriginName(config: Config): string {
  return `samples.${config.EDGE_DOMAIN}`;
}

/**
 * The organization behind /preview-guest: one origin over the sample images, under a fixed
 * name so guests' URLs stay valid across restarts. Every installation has it.
 */
export async function ensureGuestPreviewOrigin(db: Db, config: Config): Promise<void> {
  const { id } = await ensureOrganization(db, SAMPLES_SERVICE_CODE, {
    memberCode: 'UKIYO0000',
    accountName: 'Ukiyo',
    name: 'Ukiyo samples',
    description: 'Serves the guest preview (/preview-guest)',
  });
  const name = guestOriginName(config);
  const origin = await db
    .selectFrom('origins')
    .select(['id', 'name'])
    .where('organization_id', '=', id)
    .executeTakeFirst();
  if (!origin) {
    // Processes starting together race here too; the first insert wins, the name is unique.
    await insertOrigin(
      db,
      id,
      name,
      sampleOriginValues(name, 'Sample images for the guest preview'),
      [],
    ).catch(async (error: unknown) => {
      const winner = await db
        .selectFrom('origins')
        .select('id')
        .where('organization_id', '=', id)
        .executeTakeFirst();
      if (!winner) throw error;
    });
  } else if (origin.name !== name) {
    // EDGE_DOMAIN changed since the origin was made.
    await db
      .updateTable('origins')
      .set((eb) => ({ name, origin_name: name, config_version: eb('config_version', '+', 1) }))
      .where('id', '=', origin.id)
      .execute();
  }
}

/** A demo image organization (DEMO=1) with an origin over the sample images, so a new installation shows a populated console. */
export async function ensureDemoOrganization(db: Db, config: Config): Promise<void> {
  const { id, created } = await ensureOrganization(db, DEMO_SERVICE_CODE, {
    memberCode: 'DEMO0001',
    accountName: 'Ukiyo Demo',
    name: 'Demo images',
    description: 'Sample organization created by DEMO=1',
  });
  if (!created) return;
  const name = generateOriginName(config.EDGE_DOMAIN);
  await insertOrigin(db, id, name, sampleOriginValues(name, 'Sample images: try /w=400/fuji.jpg'), []);
}
