import { z } from 'zod';

/**
 * Entities as they travel to the console (console-spec section 3). Handlers answer through
 * these schemas, which strip anything else: database rows never leak into responses.
 */
export const SakuraAccount = z.object({
  sakuraAccountID: z.number(),
  sakuraMemberCode: z.string(),
  name: z.string(),
});
export type SakuraAccount = z.infer<typeof SakuraAccount>;

export const Organization = z.object({
  organizationID: z.number(),
  name: z.string(),
  memberCode: z.string(),
  serviceCode: z.string(),
  serviceDomain: z.string(),
  plan: z.number(),
  features: z.object({ imageConversion: z.boolean(), live: z.boolean() }),
  isLive: z.boolean(),
  enableTextOverlay: z.boolean(),
  description: z.string(),
  sakuraAccount: SakuraAccount,
});
export type Organization = z.infer<typeof Organization>;

export const PlanFeatures = z.object({
  originLimit: z.number(),
  userLimit: z.number().nullable(),
  supportEmail: z.boolean(),
  customDomain: z.boolean(),
  /** S3 (non-HTTP) origins; beyond the spec's four features, for its 'non-HTTP origin' refusal. */
  s3Origins: z.boolean(),
});

export const Restriction = z.object({
  /** Empty: unrestricted, every organization of the user's account. */
  organizationIDs: z.array(z.number()),
});

export const User = z.object({
  userID: z.number(),
  emailAddress: z.string(),
  fullName: z.string(),
  permission: z.number(),
  enabled: z.boolean(),
  activatedAt: z.string().nullable(),
  sakuraAccount: SakuraAccount.nullable(),
  restriction: Restriction,
  totpEnabled: z.boolean(),
});
export type User = z.infer<typeof User>;

export const OriginKind = { http: 0, s3: 1, live: 101 } as const;
export const OriginStatus = { error: 0, applied: 1, updating: 2 } as const;

/**
 * What origin.check found when it fetched a path of an origin through the edge's own fetcher:
 * a machine-readable code the console translates (never the fetcher's English), with details.
 * `ok` is a 2xx answer; `forbidden`, `notFound` and `httpError` are the origin's own answers
 * (403, 404/410, anything else); `unusable` is an origin the edge cannot load (see `reason`).
 */
export const OriginCheckOutcome = z.enum([
  'ok',
  'privateAddress',
  'dnsFailure',
  'tlsError',
  'connectionFailed',
  'redirectFailed',
  'timeout',
  'forbidden',
  'notFound',
  'httpError',
  'unusable',
]);
export type OriginCheckOutcome = z.infer<typeof OriginCheckOutcome>;

export const OriginCheckResult = z.object({
  outcome: OriginCheckOutcome,
  /** The path fetched inside the origin, with leading slash (the origin's path prefix goes before it). */
  path: z.string(),
  /** The origin's HTTP status, when it answered. */
  status: z.number().nullable(),
  contentType: z.string().nullable(),
  /** Body bytes read, at most the check's limit (`truncated` when the body went on). */
  bytes: z.number(),
  truncated: z.boolean(),
  elapsedMs: z.number(),
  /** For `unusable`: the message reference of why (the same as an origin's Error reason). */
  reason: z.string(),
});
export type OriginCheckResult = z.infer<typeof OriginCheckResult>;

export const HttpConfig = z.object({
  scheme: z.enum(['http', 'https']),
  host: z.string(),
  pathPrefix: z.string(),
  rewriteHost: z.string(),
});
export const S3Config = z.object({
  accessKeyID: z.string(),
  /** Never sent back in full: the console shows whether one is set. */
  secretAccessKey: z.string(),
  endPoint: z.string(),
  region: z.string(),
  bucket: z.string(),
  pathPrefix: z.string(),
});

export const ConversionParameter = z.object({
  conversionParameterID: z.number(),
  originID: z.number(),
  pattern: z.string(),
  path: z.string(),
  parameter: z.string(),
  disallowOverride: z.boolean(),
});

export const TlsCertificate = z.object({
  tlsCertificateId: z.number(),
  fingerprint: z.string(),
  expiresAt: z.string(),
});

export const Acl = z.object({ isAllowList: z.boolean(), cidrs: z.array(z.string()) });

export const Origin = z.object({
  originID: z.number(),
  organizationID: z.number(),
  name: z.string(),
  kind: z.number(),
  status: z.number(),
  statusMessage: z.string(),
  originName: z.string(),
  enableSignedUrl: z.boolean(),
  signingSecret: z.string(),
  defaultCache: z.number(),
  /** The edge honours DPR and Width client hints where the URL leaves the size open. */
  enableClientHints: z.boolean(),
  /** The edge rasterises this origin's SVG images (self-contained ones only). */
  allowSvg: z.boolean(),
  description: z.string(),
  tlsCertificate: TlsCertificate.nullable(),
  conversionParameters: z.array(ConversionParameter),
  overridableParameters: z.string(),
  acl: Acl,
  config: z.union([HttpConfig, S3Config, z.object({})]),
  /** Where the edge serves this origin's images: its generated name on the edge's public address. */
  deliveryUrl: z.string(),
});
export type Origin = z.infer<typeof Origin>;

export const OriginMinimum = Origin.pick({
  originID: true,
  name: true,
  originName: true,
  kind: true,
  enableSignedUrl: true,
  deliveryUrl: true,
});

export const Usage = z.object({ requests: z.number(), outboundBytes: z.number() });

/** What the image edge counts of its answers beside the billed usage (statistics.origins). */
export const DeliveryAnalytics = z.object({
  status: z.object({
    ok: z.number(),
    notModified: z.number(),
    clientError: z.number(),
    serverError: z.number(),
  }),
  /** Answers by where they came from; refusals have none. */
  cache: z.object({
    memory: z.number(),
    disk: z.number(),
    shared: z.number(),
    miss: z.number(),
    coalesced: z.number(),
    stale: z.number(),
  }),
  /** Answers from a cache (memory, disk, shared tier, stale) over all with a cache result; null: none. */
  hitRatio: z.number().nullable(),
  /** Bytes fetched from the origin. */
  originBytes: z.number(),
  /** Converted images answered whole: the originals' bytes, the bytes delivered, and the difference. */
  sourceBytes: z.number(),
  convertedBytes: z.number(),
  savedBytes: z.number(),
});

export const AuthToken = z.object({
  authTokenID: z.number(),
  organizationID: z.number(),
  /** Masked: 12 asterisks and the last 4 characters, except in the answer to auth_token.add. */
  token: z.string(),
  enabled: z.boolean(),
  deleted: z.boolean(),
  description: z.string(),
  createdAt: z.string(),
  permission: z.number().nullable(),
});

export const Channel = z.object({
  id: z.string(),
  createdAt: z.string(),
  activeConnectionCount: z.number(),
  /** A publisher is connected now: its live process's heartbeat is fresh. */
  onAir: z.boolean(),
  hlsUrl: z.string().nullable(),
  status: z.enum(['normal', 'deleting']),
  settings: z.record(z.string(), z.unknown()),
  /** The publisher now (if any), the key id, and where encoders publish to the channel. */
  liveParams: z.object({
    connectionId: z.string().nullable(),
    kid: z.string().nullable(),
    whipUrl: z.string(),
    soraUrl: z.string(),
    /** RTMP server URL (`rtmp://{host}:{port}/live`); the stream key goes separately. */
    rtmpUrl: z.string(),
    /** The same over TLS, when the live server has RTMPS. */
    rtmpsUrl: z.string().nullable(),
    streamKey: z.string(),
    /** SRT caller URL, streamid and passphrase included. */
    srtUrl: z.string(),
  }),
});

/** Live usage over a period: WebRTC ingest and HLS delivery. */
export const LiveUsage = z.object({
  connectedSeconds: z.number(),
  /** WebRTC connections opened. */
  connections: z.number(),
  maxConcurrent: z.number(),
  bytesIn: z.number(),
  hlsRequests: z.number(),
  hlsBytesOut: z.number(),
  /** The publisher's connected time (connectedSeconds counts WebRTC viewers' too). */
  publishingSeconds: z.number(),
  /** The most HLS viewers at once (distinct clients within ~5 s). */
  hlsMaxViewers: z.number(),
});

/** Sign-ins and sign-outs of an account. */
export const AUDIT_SESSION_KINDS = ['login', 'logout', 'login_failed'] as const;
/** What a recorded configuration change was made to (see the server's audit-trail.ts). */
export const AUDIT_CHANGE_KINDS = [
  'origin',
  'certificate',
  'member',
  'password',
  'token',
  'plan',
  'organization',
  'channel',
  'cache',
  'two_step',
  'webhook_secret',
] as const;
export const AuditKind = z.enum([...AUDIT_SESSION_KINDS, ...AUDIT_CHANGE_KINDS], {
  error: 'validation.invalid',
});
export type AuditKind = z.infer<typeof AuditKind>;

export const AuditEntry = z.object({
  auditEntryID: z.number(),
  time: z.string(),
  kind: AuditKind,
  /** The person: the signed-in user, or the user an API token acts for. */
  email: z.string(),
  ip: z.string(),
  /** The API token a change was made with; null for a person in the console. */
  token: z.object({ id: z.number(), name: z.string() }).nullable(),
  /** The operation that made a change (`origin.update`); null for sign-ins and sign-outs. */
  operation: z.string().nullable(),
  /** The changed thing's name (an origin's host, a member's e-mail address, a URL). */
  subject: z.string(),
  /** The changed fields before and after (secrets masked); null before a creation or after a deletion. */
  before: z.record(z.string(), z.unknown()).nullable(),
  after: z.record(z.string(), z.unknown()).nullable(),
});

export const StatusEvent = z.object({
  statusEventID: z.number(),
  kind: z.enum(['incident', 'maintenance']),
  title: z.string(),
  body: z.string(),
  state: z.enum(['scheduled', 'in_progress', 'resolved']),
  startsAt: z.string(),
  endsAt: z.string().nullable(),
});

export const InvoiceRow = z.object({
  memberId: z.string(),
  serviceCd: z.string(),
  name: z.string(),
  transferGiB: z.number(),
  requests: z.number(),
  /** The month's charge by the organization's plan in plan_prices; null without a price. */
  amount: z.number().nullable(),
  currency: z.string().nullable(),
});

/** A plan's prices (plan_prices): what the dashboard and the plan page show. */
export const PlanPrice = z.object({
  plan: z.number(),
  currency: z.string(),
  monthlyFee: z.number(),
  includedRequests: z.number(),
  includedBytes: z.number(),
  per10kRequests: z.number(),
  perGiB: z.number(),
});

export const DashboardUsage = z.object({
  billingPeriod: z.object({ from: z.string(), to: z.string() }),
  requests: z.number(),
  outboundBytes: z.number(),
  /** This month per UTC day, the whole of last month, and this month carried on at its pace. */
  daily: z.array(Usage.extend({ day: z.string() })),
  lastMonth: Usage,
  projected: Usage,
  /** Image organizations: cache hit ratio (null: no answers yet) and bytes saved by conversion. */
  hitRatio: z.number().nullable(),
  savedBytes: z.number(),
  /** The plan's prices and the charge so far and projected; null when the plan has no price. */
  price: PlanPrice.nullable(),
  cost: z.object({ soFar: z.number(), projected: z.number() }).nullable(),
  liveConnectedSeconds: z.number(),
  webrtcCumulative: z.number(),
  maxConcurrentConnections: z.number(),
});
