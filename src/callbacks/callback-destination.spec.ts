import { destinationOf } from './callback-destination.js';

describe('destinationOf', () => {
  it.each([
    ['https://hooks.example.com/a/b?token=secret#x', 'https://hooks.example.com'],
    ['https://HOOKS.Example.com:443/a', 'https://hooks.example.com'],
    ['https://hooks.example.com:8443/a', 'https://hooks.example.com:8443'],
    ['http://127.0.0.1:8080/cb', 'http://127.0.0.1:8080'],
    ['http://127.0.0.1:80/cb', 'http://127.0.0.1'],
    ['https://[2001:db8::1]:444/x', 'https://[2001:db8::1]:444'],
  ])('%s is destination %s', (url, origin) => expect(destinationOf(url)).toBe(origin));

  it('never keeps the path or query, where tokens live', () => {
    expect(destinationOf('https://a.example/hook/tok_123?key=abc')).not.toMatch(/tok_123|abc/);
  });
});
