import { loadConfig } from './app-config.js';
import { parseDuration } from './durations.js';

describe('REDIS_URL', () => {
  it.each([
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    [
      'redis://10.0.0.1:7000, redis://10.0.0.2:7000,redis://10.0.0.3:7000',
      'redis://10.0.0.1:7000,redis://10.0.0.2:7000,redis://10.0.0.3:7000',
    ],
    ['rediss://u:p@a:7000,rediss://u:p@b:7000', 'rediss://u:p@a:7000,rediss://u:p@b:7000'],
  ])('accepts %s', (raw, normalized) => {
    expect(loadConfig({ REDIS_URL: raw }).redisUrl).toBe(normalized);
  });

  it.each([
    ['redis://a:7000,http://b:7000', /REDIS_URL: must use redis: or rediss:, got "http:"/],
    ['redis://a:7000,', /REDIS_URL: "" is not a URL/],
    ['redis://a:7000/2,redis://b:7000/2', /REDIS_URL: a Redis Cluster has database 0 only/],
    ['redis://a:7000,rediss://b:7000', /REDIS_URL: the seed URLs of a Redis Cluster must share scheme and credentials/],
  ])('refuses %s naming the variable', (raw, message) => {
    expect(() => loadConfig({ REDIS_URL: raw })).toThrow(message);
  });
});

describe('CALLBACK_RETENTION', () => {
  it('defaults to 30 days', () => {
    expect(loadConfig({}).callbackRetentionMs).toBe(30 * 86_400_000);
  });

  it.each([
    ['1s', 1000],
    ['90m', 5_400_000],
    ['12h', 43_200_000],
    ['7d', 604_800_000],
  ])('parses %s', (raw, ms) => {
    expect(loadConfig({ CALLBACK_RETENTION: raw }).callbackRetentionMs).toBe(ms);
  });

  it.each(['30', '1w', '-1d', '500ms', '0s'])('refuses %s naming the variable', (raw) => {
    expect(() => loadConfig({ CALLBACK_RETENTION: raw })).toThrow(/CALLBACK_RETENTION: /);
  });

  it('parseDuration takes days where the retry schedule does not need them', () => {
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(() => parseDuration('2 weeks')).toThrow('is not a duration');
  });
});
