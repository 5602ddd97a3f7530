/**
 * A callback's destination is its URL's origin (scheme, host, port; the WHATWG serialisation:
 * lower-case host, default port omitted). Concurrency limits and the circuit breaker work per
 * destination, so every path of one receiving server shares them, while the path and query —
 * which may carry a partner's token — never appear where destinations are shown.
 */
export function destinationOf(url: string): string {
  try {
    const origin = new URL(url).origin;
    // Non-special schemes have an opaque origin ("null"); registration only admits http(s).
    return origin === 'null' ? url : origin;
  } catch {
    return url;
  }
}
