import { X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { messageRef, OriginKind, OriginStatus } from '@ukiyo/contract';
import { validateRules, type RuleSet } from '@ukiyo/imaging';
import type { Logger } from 'pino';
import { Acl } from '../acl.ts';
import { digest } from '../cache/disk-cache.ts';
import type { Db, SecretBox } from '../types.ts';
import { originSource, type OriginSource } from './source.ts';

/** An origin as the edge serves it: secrets opened, rules and ACL compiled. */
export interface EdgeOrigin {
  id: number;
  organizationId: number;
  version: number;
  name: string;
  originName: string;
  enableSignedUrl: boolean;
  signingSecret: string;
  defaultCache: number;
  acl: Acl;
  ruleSet: RuleSet;
  allowText: boolean;
  /** DPR and Width client hints fill in sizes the URL leaves open. */
  clientHints: boolean;
  /** SVG images are rasterised (else they are unrecognised data). */
  allowSvg: boolean;
  source: OriginSource;
  /**
   * Names the source settings, and how its files are read, in variant keys: a changed host or
   * bucket never serves old variants, nor does an SVG allowed or refused since.
   */
  sourceDigest: string;
  /** The uploaded certificate of the custom domain (`originName`), for HTTPS by SNI. */
  tls: SecureContext | null;
}

interface CertificateRow {
  origin_id: number;
  fingerprint: string;
  certificate: string;
  intermediate_certificate: string;
  private_key_enc: string;
}

function originRows(db: Db) {
  return db
    .selectFrom('origins')
    .innerJoin('organizations', 'organizations.id', 'origins.organization_id')
    .selectAll('origins')
    .select('organizations.enable_text_overlay');
}
type OriginRow = Awaited<ReturnType<ReturnType<typeof originRows>['execute']>>[number];

function coversHost(certificate: string, host: string): boolean {
  try {
    return new X509Certificate(certificate).checkHost(host) !== undefined;
  } catch {
    return false;
  }
}

type Loaded = { origin: EdgeOrigin; problem: null } | { origin: null; problem: string };

type Certificates = Map<number, { fingerprint: string; context: SecureContext }>;

/**
 * A Host header or an SNI name as origins are keyed: without its port or the trailing dot of an
 * absolute name (`img.example.com.` is the same host), in lower case.
 */
export function hostName(host: string): string {
  return host.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
}

/** What changes an origin as the edge serves it: any edit bumps config_version. */
const versionOf = (row: { config_version: number; enable_text_overlay: boolean }) =>
  `${row.config_version}:${row.enable_text_overlay ? 1 : 0}`;

/**
 * Host name to origin, from the database. Every edge process polls the origins' versions, so a
 * change made anywhere reaches every edge within one interval; after loading a version it
 * records Applied (or Error with the reason) on that version only, so a newer edit is never
 * marked as applied by an older load. Only the origins whose version changed are read and
 * opened again: a tenant editing origins in a loop costs the edge one origin per edit, not all
 * of them.
 */
export class OriginRegistry {
  private byHost = new Map<string, EdgeOrigin>();
  private byId = new Map<number, EdgeOrigin>();
  /** Custom domain to its TLS context; only custom domains with a certificate are here. */
  private bySni = new Map<string, SecureContext>();
  /** By origin: a context is built once per uploaded certificate. */
  private contexts: Certificates = new Map();
  /** The version of every origin loaded or refused, by id. */
  private versions = new Map<number, string>();
  private started = false;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  /** Counts the reloads that changed any origin: what was resolved under an older one is stale. */
  generation = 0;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly log: Logger,
    private readonly on: { removed(originId: number): void; changed(): void },
  ) {}

  async start(pollMs: number): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) => this.log.warn({ err: error }, 'origin refresh failed'));
    }, pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The origin a Host header names, in whatever form a client wrote it (hostName). */
  forHost(host: string): EdgeOrigin | undefined {
    return this.byHost.get(hostName(host));
  }

  forId(id: number): EdgeOrigin | undefined {
    return this.byId.get(id);
  }

  /**
   * The TLS context for an SNI server name: only a custom domain with its own uploaded
   * certificate has one; every other name (unknown, the product's own names) has none.
   */
  tlsFor(servername: string): SecureContext | undefined {
    return this.bySni.get(hostName(servername));
  }

  /** Reloads what changed in the table; concurrent callers share one reload. */
  refresh(): Promise<void> {
    this.reloading ??= this.reloadChanged().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async reloadChanged(): Promise<void> {
    // LIVE origins belong to the live service; their status is not the edge's to set.
    const current = await this.db
      .selectFrom('origins')
      .innerJoin('organizations', 'organizations.id', 'origins.organization_id')
      .select(['origins.id', 'origins.config_version', 'organizations.enable_text_overlay'])
      .where('origins.kind', '<>', OriginKind.live)
      .execute();
    const present = new Set(current.map((row) => row.id));
    const changed = current
      .filter((row) => this.versions.get(row.id) !== versionOf(row))
      .map((row) => row.id);
    const removed = [...this.versions.keys()].filter((id) => !present.has(id));
    const first = !this.started;
    this.started = true;
    if (changed.length === 0 && removed.length === 0) return;
    await this.reload(changed, removed);
    if (!first) this.on.changed();
  }

  private async reload(changed: number[], removed: number[]): Promise<void> {
    const rows = await originRows(this.db)
      .where((eb) => eb('origins.id', '=', eb.fn.any(eb.val(changed))))
      .execute();
    const rules = await this.db
      .selectFrom('conversion_parameters')
      .selectAll()
      .where((eb) => eb('origin_id', '=', eb.fn.any(eb.val(changed))))
      .orderBy('position')
      .execute();
    const certificates = new Map(
      (
        await this.db
          .selectFrom('tls_certificates')
          .select(['origin_id', 'fingerprint', 'certificate', 'intermediate_certificate', 'private_key_enc'])
          .where((eb) => eb('origin_id', '=', eb.fn.any(eb.val(changed))))
          .execute()
      ).map((certificate) => [certificate.origin_id, certificate]),
    );
    const loaded = new Map<number, EdgeOrigin | null>();
    const contexts: Certificates = new Map();
    for (const row of rows) {
      const result = this.load(
        row,
        rules.filter((rule) => rule.origin_id === row.id),
        certificates.get(row.id),
        contexts,
      );
      const [status, message] = result.origin
        ? [OriginStatus.applied, '']
        : [OriginStatus.error, result.problem];
      if (row.status !== status || row.status_message !== message) {
        await this.db
          .updateTable('origins')
          .set({ status, status_message: message })
          .where('id', '=', row.id)
          .where('config_version', '=', row.config_version)
          .execute();
      }
      loaded.set(row.id, result.origin);
    }
    // Deleted since the versions were read: gone like the removed ones.
    const gone = [...removed, ...changed.filter((id) => !loaded.has(id))];
    // Every old name is dropped before any new one is added: a name one origin gives up may be
    // taken by another in the same reload.
    const dropped = new Set([...loaded.keys(), ...gone].filter((id) => this.unindex(id)));
    this.generation++;
    for (const row of rows) {
      const origin = loaded.get(row.id);
      const context = contexts.get(row.id);
      if (context) this.contexts.set(row.id, context);
      else this.contexts.delete(row.id);
      this.versions.set(row.id, versionOf(row));
      if (!origin) continue;
      this.index(origin);
      dropped.delete(row.id);
    }
    for (const id of gone) {
      this.contexts.delete(id);
      this.versions.delete(id);
    }
    for (const id of dropped) this.on.removed(id);
  }

  private index(origin: EdgeOrigin): void {
    const name = origin.name.toLowerCase();
    const customDomain = origin.originName.toLowerCase();
    this.byId.set(origin.id, origin);
    this.byHost.set(name, origin);
    this.byHost.set(customDomain, origin);
    if (origin.tls && customDomain !== name) this.bySni.set(customDomain, origin.tls);
  }

  /** Forgets a loaded origin's names; false when it was not loaded. */
  private unindex(id: number): boolean {
    const origin = this.byId.get(id);
    if (!origin) return false;
    this.byId.delete(id);
    for (const host of [origin.name.toLowerCase(), origin.originName.toLowerCase()]) {
      if (this.byHost.get(host) === origin) this.byHost.delete(host);
      if (origin.tls && this.bySni.get(host) === origin.tls) this.bySni.delete(host);
    }
    return true;
  }

  private load(
    row: OriginRow,
    rules: Array<{ pattern: string; path: string; parameter: string; disallow_override: boolean }>,
    certificate: CertificateRow | undefined,
    contexts: Certificates,
  ): Loaded {
    // The reason is a message reference the console translates; the detail stays in the log.
    const fail = (problem: string, detail?: string): Loaded => {
      if (detail) this.log.warn({ originId: row.id, detail }, 'origin cannot be loaded');
      return { origin: null, problem };
    };
    let signingSecret = '';
    try {
      if (row.signing_secret_enc) signingSecret = this.secrets.open(row.signing_secret_enc);
    } catch {
      return fail(messageRef('originStatus.signingSecretUnreadable'));
    }
    if (row.enable_signed_url && !signingSecret) return fail(messageRef('originStatus.signingSecretMissing'));
    const ruleSet: RuleSet = {
      rules: rules.map((rule) => ({
        pattern: `/${rule.pattern}`,
        path: `/${rule.path}`,
        parameter: rule.parameter,
        disallowOverride: rule.disallow_override,
      })),
      overridableParameters: row.overridable_parameters,
    };
    const problem = validateRules(ruleSet)[0];
    if (problem) {
      const pattern = problem.index === null ? null : (ruleSet.rules[problem.index]?.pattern ?? '');
      return fail(
        pattern === null
          ? messageRef('originStatus.overridableInvalid')
          : messageRef('originStatus.ruleInvalid', { pattern }),
        `${problem.field}: ${problem.reason}`,
      );
    }
    const { source, problem: sourceProblem } = originSource(row.kind, row.config, (sealed) =>
      this.secrets.open(sealed),
    );
    if (!source) return fail(sourceProblem);
    let tls: SecureContext | null = null;
    // A certificate left over from an earlier custom domain is not served for the new one.
    if (certificate && coversHost(certificate.certificate, row.origin_name)) {
      const known = this.contexts.get(row.id);
      if (known?.fingerprint === certificate.fingerprint) {
        tls = known.context;
      } else {
        let key: string;
        try {
          key = this.secrets.open(certificate.private_key_enc);
        } catch {
          return fail(messageRef('originStatus.tlsKeyUnreadable'));
        }
        try {
          tls = createSecureContext({
            key,
            cert: certificate.certificate + certificate.intermediate_certificate,
          });
        } catch (error) {
          return fail(messageRef('originStatus.tlsCertificateUnusable'), (error as Error).message);
        }
      }
      contexts.set(row.id, { fingerprint: certificate.fingerprint, context: tls });
    }
    return {
      problem: null,
      origin: {
        id: row.id,
        organizationId: row.organization_id,
        version: row.config_version,
        name: row.name,
        originName: row.origin_name,
        enableSignedUrl: row.enable_signed_url,
        signingSecret,
        defaultCache: row.default_cache,
        acl: Acl.compile(row.acl),
        ruleSet,
        allowText: row.enable_text_overlay,
        clientHints: row.enable_client_hints,
        allowSvg: row.allow_svg,
        source,
        sourceDigest: digest(JSON.stringify({ source, allowSvg: row.allow_svg })),
        tls,
      },
    };
  }
}
