/**
 * A callback URL's origin: scheme, host and port, lower-case, the default port left out; the path
 * and query (which may carry a partner's token) never. A callback's destination is its partner's
 * origin (destinationKey): concurrency limits and the circuit breaker work per destination, so
 * every path of one partner's receiving server shares them, and another partner's receivers on
 * the same server have their own.
 *
 * PostgreSQL computes the origin with the SQL function `callback_origin` (migration
 * 1763900000000-destinations.ts) for every row's `callbacks.destination` (migration
 * 1764700000000-partner-destinations.ts), so every writer of callbacks gets it right; this is the
 * same function, step for step, for code that needs it without a row.
 * `test/callback-origin.e2e-spec.ts` runs both over one table of URLs. A URL with no `scheme://`
 * is its own origin (registration only stores http and https URLs).
 */
export function callbackOrigin(url: string): string {
  const origin = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url)?.[0].toLowerCase() ?? url;
  return origin.replace(/^(https:\/\/.*):443$/, '$1').replace(/^(http:\/\/.*):80$/, '$1');
}

/**
 * A destination's key (`callbacks.destination`, `destinations.key`): the partner's id and the
 * origin, a space between (an origin never holds one). Keys are for joins and maps; what anyone
 * is shown is the origin (originOfKey).
 */
export const destinationKey = (partnerId: string, origin: string): string => `${partnerId} ${origin}`;

/** The origin of a destination's key: what views, events, errors and logs name. */
export const originOfKey = (key: string): string => key.slice(key.indexOf(' ') + 1);
