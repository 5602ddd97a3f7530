import { loadConfig } from './app-config.js';

describe('destination isolation settings', () => {
  it('defaults to 40 slots per destination, 5 failures, probes 5 s doubling to 5 min', () => {
    const c = loadConfig({});
    expect(c.callbackDestinationConcurrency).toBe(40);
    expect(c.callbackBreakerThreshold).toBe(5);
    expect(c.callbackBreakerProbeMs).toEqual({ first: 5000, last: 300_000 });
  });

  it('reads CALLBACK_BREAKER_PROBE as first..last', () => {
    expect(loadConfig({ CALLBACK_BREAKER_PROBE: '500ms..1m' }).callbackBreakerProbeMs).toEqual({
      first: 500,
      last: 60_000,
    });
  });

  it.each([
    ['CALLBACK_BREAKER_PROBE', '5s'],
    ['CALLBACK_BREAKER_PROBE', '5m..5s'],
    ['CALLBACK_BREAKER_PROBE', '10ms..1s'],
    ['CALLBACK_DESTINATION_CONCURRENCY', '0'],
    ['CALLBACK_BREAKER_THRESHOLD', 'x'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name}: `));
  });
});
