import { ConfigError, DEV_SECRETS_KEY, loadConfig } from './app-config.js';

const KEY = 'k'.repeat(32);

describe('SECRETS_KEY', () => {
  it.each<[string, Record<string, string>, string[] | RegExp]>([
    ['unset outside production: the development key, flagged', {}, [DEV_SECRETS_KEY]],
    ['one key', { SECRETS_KEY: KEY }, [KEY]],
    ['a list, newest first, spaces trimmed', { SECRETS_KEY: ` ${KEY}2 , ${KEY}1 ` }, [`${KEY}2`, `${KEY}1`]],
    ['unset in production', { NODE_ENV: 'production', ADMIN_TOKEN: 'a'.repeat(16) }, /SECRETS_KEY: must be set when NODE_ENV=production/],
    ['a key under 32 characters', { SECRETS_KEY: `${KEY},short` }, /SECRETS_KEY: each comma-separated key must be at least 32 characters/],
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
