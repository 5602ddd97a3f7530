// The one reader of process.env (every variable: docs/configuration.md). Parsed once at start; an
// invalid value stops the process with a message naming the variable.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { parseDuration, parseDurationList } from './durations.js';

export type ApiVariant = 'A' | 'B';
export type Role = 'api' | 'worker' | 'all';
/** LOG_FORMAT: `json` lines for collectors, `text` for people (docs/operations.md, "Logs"). */
export type LogFormat = 'json' | 'text';

export interface AppConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  role: Role;
  adminToken: string;
  adminTokenGenerated: boolean;
  variant: ApiVariant;
  callbackSourceIps: string[];
  callbackLocalAddresses: string[];
  callbackProxyUrl: string | null;
  callbackTimeoutMs: number;
  /** TCP (and TLS) connect, within the attempt's timeout. */
  callbackConnectTimeoutMs: number;
  callbackRetryScheduleMs: number[];
  /** Deliveries in flight per worker process. */
  callbackConcurrency: number;
  /** Admitted callbacks held in Redis at once (sending), all workers together. */
  callbackReadyWindow: number;
  /** Requests in flight to one destination (URL origin), all workers together. */
  callbackDestinationConcurrency: number;
  /** Consecutive failed attempts (timeout, network, 5xx, 429) that open a destination's circuit. */
  callbackBreakerThreshold: number;
  /** First and last interval between probes of an open destination (doubling in between). */
  callbackBreakerProbeMs: { first: number; last: number };
  callbackAllowHttp: boolean;
  callbackAllowPrivateTargets: boolean;
  callbackRetentionMs: number;
  /** The queue dashboard's Completed tab: at most this many delivered callbacks, delivered within this long (ms). */
  dashboardKeep: { completed: { count: number; ageMs: number } };
  /** SECRETS_KEY: the keys that encrypt signing secrets at rest, newest (the one that encrypts) first. */
  secretsKeys: string[];
  secretsKeyDefaulted: boolean;
  logFormat: LogFormat;
  version: string;
  /** Where portal links point (PORTAL_BASE_URL, no trailing slash); https makes the session cookie Secure. */
  portalBaseUrl: string;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

export const DEFAULT_SOURCE_IPS: Record<ApiVariant, string[]> = {
  A: ['20.105.118.54', '20.93.102.228'],
  B: ['20.82.192.194', '20.67.208.150', '20.105.65.222', '20.93.102.228'],
};

/** Chosen by measurement: see docs/configuration.md, "Why the delivery defaults". */
export const DEFAULT_DESTINATION_CONCURRENCY = 40;
export const DEFAULT_BREAKER_THRESHOLD = 5;
export const DEFAULT_CONCURRENCY = 200;
export const DEFAULT_READY_WINDOW = 1000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 4000;

export class ConfigError extends Error {}

/** LOG_FORMAT's default: lines for people on a terminal, JSON for whatever collects them otherwise. */
export function defaultLogFormat(): LogFormat {
  return process.stdout.isTTY === true ? 'text' : 'json';
}

function parseLogFormat(raw: string): LogFormat {
  if (raw !== 'json' && raw !== 'text') throw new Error(`must be json or text, got "${raw}"`);
  return raw;
}

/** The log format to report a failed start in: LOG_FORMAT when it is valid, the default otherwise. */
export function logFormatOf(env: NodeJS.ProcessEnv = process.env): LogFormat {
  try {
    return parseLogFormat((env.LOG_FORMAT ?? '').trim());
  } catch {
    return defaultLogFormat();
  }
}

/** The OTLP protocols the service exports traces with (src/platform/telemetry). */
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'];

/**
 * Used when SECRETS_KEY is unset outside production, so a development database stays readable
 * across restarts; main.ts warns. Public by nature: never protects anything real.
 */
export const DEV_SECRETS_KEY = 'development-only-secrets-key-do-not-use-in-production';

function readVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('../../../../package.json') as { version: string }).version;
  } catch {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return (require('../../../package.json') as { version: string }).version;
    } catch {
      return '0.0.0';
    }
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const errors: string[] = [];
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  function parse<T>(name: string, fallback: T, fn: (raw: string) => T): T {
    const raw = get(name);
    if (raw === undefined) return fallback;
    try {
      return fn(raw);
    } catch (e) {
      errors.push(`${name}: ${(e as Error).message}`);
      return fallback;
    }
  }
  const int = (min: number, max: number) => (raw: string) => {
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new Error(`must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
  const bool = (raw: string) => {
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    throw new Error(`must be true or false, got "${raw}"`);
  };
  const url = (schemes: string[]) => (raw: string) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`"${raw}" is not a URL`);
    }
    if (!schemes.includes(u.protocol)) throw new Error(`must use ${schemes.join(' or ')}, got "${u.protocol}"`);
    return raw;
  };
  // One URL is a single Redis; several, comma-separated, are the seed nodes of a Redis Cluster.
  const redisUrls = (raw: string) => {
    const seeds = raw.split(',').map((s) => url(['redis:', 'rediss:'])(s.trim()));
    if (seeds.length > 1) {
      const parsed = seeds.map((s) => new URL(s));
      if (parsed.some((u) => u.pathname !== '' && u.pathname !== '/' && u.pathname !== '/0'))
        throw new Error('a Redis Cluster has database 0 only: no /<db> on its seed URLs');
      if (new Set(parsed.map((u) => `${u.protocol}//${u.username}:${u.password}`)).size > 1)
        throw new Error('the seed URLs of a Redis Cluster must share scheme and credentials');
    }
    return seeds.join(',');
  };
  const ipList = (raw: string) =>
    raw.split(',').map((s) => {
      const ip = s.trim();
      if (!isIP(ip)) throw new Error(`"${ip}" is not an IP address`);
      return ip;
    });

  const duration = (raw: string) => {
    const ms = parseDuration(raw);
    if (ms < 1000) throw new Error('must be at least 1s');
    return ms;
  };

  const variant = parse<ApiVariant>('API_VARIANT', 'B', (raw) => {
    if (raw !== 'A' && raw !== 'B') throw new Error(`must be A or B, got "${raw}"`);
    return raw;
  });
  const role = parse<Role>('ROLE', 'all', (raw) => {
    if (raw !== 'api' && raw !== 'worker' && raw !== 'all') throw new Error(`must be api, worker or all, got "${raw}"`);
    return raw;
  });
  const queuePrefix = parse('QUEUE_PREFIX', 'funding', (raw) => {
    // BullMQ builds keys as prefix:queue:id; a colon inside the prefix would blur that boundary.
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(raw)) throw new Error('must be 1-64 letters, digits, ".", "_" or "-"');
    return raw;
  });
  const schedule = parse('CALLBACK_RETRY_SCHEDULE', parseDurationList('5s,5m,30m,2h,5h,10h,10h'), (raw) => {
    const list = parseDurationList(raw);
    if (list.length > 50) throw new Error('at most 50 retries');
    return list;
  });

  const probe = parse('CALLBACK_BREAKER_PROBE', { first: 5000, last: 300_000 }, (raw) => {
    const m = /^([^.]+)\.\.([^.]+)$/.exec(raw);
    if (!m) throw new Error(`must be "first..last", like 5s..5m, got "${raw}"`);
    const [first] = parseDurationList(m[1]);
    const [last] = parseDurationList(m[2]);
    if (first < 100 || last < first) throw new Error('needs 100ms <= first <= last');
    return { first, last };
  });

  // The OpenTelemetry SDK reads its own OTEL_* variables; these it would only warn about.
  const otlpProtocol = (raw: string) => {
    if (!OTLP_PROTOCOLS.includes(raw)) throw new Error(`must be ${OTLP_PROTOCOLS.join(' or ')}, got "${raw}"`);
    return raw;
  };
  parse('OTEL_EXPORTER_OTLP_PROTOCOL', null, otlpProtocol);
  parse('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', null, otlpProtocol);
  parse('OTEL_EXPORTER_OTLP_ENDPOINT', null, url(['http:', 'https:']));
  parse('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', null, url(['http:', 'https:']));

  let adminToken = get('ADMIN_TOKEN');
  let adminTokenGenerated = false;
  if (adminToken === undefined) {
    if (env.NODE_ENV === 'production') errors.push('ADMIN_TOKEN: must be set when NODE_ENV=production');
    adminToken = randomBytes(24).toString('base64url');
    adminTokenGenerated = true;
  } else if (adminToken.length < 16) {
    errors.push('ADMIN_TOKEN: must be at least 16 characters');
  }

  let secretsKeys = [DEV_SECRETS_KEY];
  let secretsKeyDefaulted = true;
  const rawSecretsKey = get('SECRETS_KEY');
  if (rawSecretsKey === undefined) {
    if (env.NODE_ENV === 'production') errors.push('SECRETS_KEY: must be set when NODE_ENV=production');
  } else {
    secretsKeys = rawSecretsKey.split(',').map((k) => k.trim());
    secretsKeyDefaulted = false;
    // Said without echoing the value: configuration errors end up in logs.
    if (secretsKeys.some((k) => k.length < 32))
      errors.push('SECRETS_KEY: each comma-separated key must be at least 32 characters');
    if (new Set(secretsKeys).size !== secretsKeys.length) errors.push('SECRETS_KEY: a key is listed twice');
  }

  const config: AppConfig = {
    port: parse('PORT', 3000, int(0, 65535)),
    databaseUrl: parse(
      'DATABASE_URL',
      'postgres://postgres@127.0.0.1:5432/funding_service',
      url(['postgres:', 'postgresql:']),
    ),
    redisUrl: parse('REDIS_URL', 'redis://127.0.0.1:6379', redisUrls),
    queuePrefix,
    role,
    adminToken,
    adminTokenGenerated,
    variant,
    callbackSourceIps: parse('CALLBACK_SOURCE_IPS', DEFAULT_SOURCE_IPS[variant], ipList),
    callbackLocalAddresses: parse<string[]>('CALLBACK_LOCAL_ADDRESS', [], ipList),
    callbackProxyUrl: parse<string | null>('CALLBACK_PROXY_URL', null, url(['http:', 'https:'])),
    callbackTimeoutMs: parse('CALLBACK_TIMEOUT_MS', 15000, int(100, 600_000)),
    callbackConnectTimeoutMs: parse('CALLBACK_CONNECT_TIMEOUT_MS', DEFAULT_CONNECT_TIMEOUT_MS, int(100, 600_000)),
    callbackRetryScheduleMs: schedule,
    callbackConcurrency: parse('CALLBACK_CONCURRENCY', DEFAULT_CONCURRENCY, int(1, 10_000)),
    callbackReadyWindow: parse('CALLBACK_READY_WINDOW', DEFAULT_READY_WINDOW, int(1, 1_000_000)),
    callbackDestinationConcurrency: parse(
      'CALLBACK_DESTINATION_CONCURRENCY',
      DEFAULT_DESTINATION_CONCURRENCY,
      int(1, 10_000),
    ),
    callbackBreakerThreshold: parse('CALLBACK_BREAKER_THRESHOLD', DEFAULT_BREAKER_THRESHOLD, int(1, 1000)),
    callbackBreakerProbeMs: probe,
    callbackAllowHttp: parse('CALLBACK_ALLOW_HTTP', false, bool),
    callbackAllowPrivateTargets: parse('CALLBACK_ALLOW_PRIVATE_TARGETS', false, bool),
    callbackRetentionMs: parse('CALLBACK_RETENTION', parseDuration('30d'), (raw) => {
      const ms = parseDuration(raw);
      if (ms < 1000) throw new Error('must be at least 1s');
      return ms;
    }),
    dashboardKeep: {
      completed: {
        count: parse('DASHBOARD_KEEP_COMPLETED', 1000, int(0, 1_000_000)),
        ageMs: parse('DASHBOARD_KEEP_COMPLETED_FOR', 3_600_000, duration),
      },
    },
    secretsKeys,
    secretsKeyDefaulted,
    logFormat: parse('LOG_FORMAT', defaultLogFormat(), parseLogFormat),
    version: readVersion(),
    portalBaseUrl: '',
  };
  // The portal's own origin: a path, query or fragment would be lost from its links.
  config.portalBaseUrl = parse('PORTAL_BASE_URL', `http://127.0.0.1:${config.port}`, (raw) => {
    const u = new URL(url(['http:', 'https:'])(raw));
    if (u.pathname !== '/' || u.search || u.hash || u.username)
      throw new Error('must be an origin (scheme, host and port only), e.g. https://portal.example.com');
    return u.origin;
  });
  // A connect slower than the whole attempt would never be cut by the connect timeout.
  if (config.callbackConnectTimeoutMs > config.callbackTimeoutMs)
    config.callbackConnectTimeoutMs = config.callbackTimeoutMs;
  if (errors.length) throw new ConfigError(`Invalid configuration: ${errors.join('; ')}`);
  return config;
}
