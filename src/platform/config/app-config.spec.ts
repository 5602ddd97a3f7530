import { ConfigError, DEV_SECRETS_KEY, loadConfig, logFormatOf } from './app-config.js';

const KEY = 'k'.repeat(32);

describe('SECRETS_KEY', () => {
  it.each<[string, Record<string, string>, string[] | RegExp]>([
    ['unset outside production: the development key, flagged', {}, [DEV_SECRETS_KEY]],
    ['one key', { SECRETS_KEY: KEY }, [KEY]],
    ['a list, newest first, spaces trimmed', { SECRETS_KEY: ` ${KEY}2 , ${KEY}1 ` }, [`${KEY}2`, `${KEY}1`]],
    [
      'unset in production',
      { NODE_ENV: 'production', ADMIN_TOKEN: 'a'.repeat(16) },
      /SECRETS_KEY: must be set when NODE_ENV=production/,
    ],
    [
      'a key under 32 characters',
      { SECRETS_KEY: `${KEY},short` },
      /SECRETS_KEY: each comma-separated key must be at least 32 characters/,
    ],
    ['a key listed twice', { SECRETS_KEY: `${KEY},${KEY}` }, /SECRETS_KEY: a key is listed twice/],
  ])('%s', (_label, env, expected) => {
    if (expected instanceof RegExp) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(expected);
      // the value itself never appears in the message
      if (env.SECRETS_KEY) expect(() => loadConfig(env)).not.toThrow(/kkkkkkkk/);
    } else {
      const config = loadConfig(env);
      expect(config.secretsKeys).toEqual(expected);
      expect(config.secretsKeyDefaulted).toBe(env.SECRETS_KEY === undefined);
    }
  });
});

describe('LOG_FORMAT', () => {
  it('takes json or text', () => {
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'text' }).logFormat).toBe('text');
  });

  it('defaults to json off a terminal and text on one', () => {
    const was = process.stdout.isTTY;
    try {
      process.stdout.isTTY = false;
      expect(loadConfig({}).logFormat).toBe('json');
      expect(logFormatOf({ LOG_FORMAT: 'xml' })).toBe('json');
      process.stdout.isTTY = true;
      expect(loadConfig({}).logFormat).toBe('text');
    } finally {
      process.stdout.isTTY = was;
    }
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => loadConfig({ LOG_FORMAT: 'pretty' })).toThrow(/LOG_FORMAT: must be json or text, got "pretty"/);
  });
});

describe('OTEL_* that the service checks itself', () => {
  it.each([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json/],
    [
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
      'http/xml',
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be http\/protobuf or http\/json/,
    ],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', /OTEL_EXPORTER_OTLP_ENDPOINT: must use http: or https:/],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'not a url', /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" is not a URL/],
  ])('%s=%s stops the start', (name, value, expected) => {
    expect(() => loadConfig({ [name]: value })).toThrow(expected);
  });

  it('accepts the supported protocols and endpoints', () => {
    expect(() =>
      loadConfig({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      }),
    ).not.toThrow();
  });
});
