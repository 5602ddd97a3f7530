// The request body, refused before anything reads it when it could only cause trouble further
// in: more than 64 KiB, bytes that are not UTF-8, JSON nested deeper than any of our bodies
// (JSON.parse and every walker after it recurse: a few thousand levels overflow the stack), and
// text PostgreSQL cannot store (NUL) or that is not Unicode (a lone surrogate from a \ud800 escape),
// and keys that poison prototypes (`__proto__`, `constructor.prototype`). Fastify's own parsers are
// replaced by the two below, so no body reaches a route without passing here.
import { isUtf8 } from 'node:buffer';
import { BadRequestException } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { parse as secureJsonParse } from 'secure-json-parse';

/** Our bodies are flat objects; 32 leaves room for clients' envelopes and stays far from the stack's limit. */
export const MAX_JSON_DEPTH = 32;

/** The largest body read, in bytes; a larger one is answered 413 before it is read whole. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A refused body: a 400 in the validation shape (`message` is a list) naming what is wrong. */
class BodyRefused extends BadRequestException {
  constructor(message: string) {
    super([message]);
    this.message = message;
  }
}

/** Throws when JSON text nests objects and arrays deeper than `max`; scans bytes, parses nothing. */
export function assertJsonDepth(buf: Buffer, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next byte is escaped, whatever it is
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) throw new BodyRefused(`Request body nests JSON deeper than ${max} levels`);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether text can be stored and read back as it is: Unicode without NUL. */
export function isStorableText(s: string): boolean {
  return !s.includes('\u0000') && !LONE_SURROGATE.test(s);
}

/** The first string (value or property name) that is not storable text, as a path like `a.b[2]`; null when all are. */
export function findUnstorableText(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : path || 'body';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (!isStorableText(k)) return `a property name${path ? ` in ${path}` : ''}`;
      const found = findUnstorableText(v, path ? `${path}.${k}` : k);
      if (found) return found;
    }
  }
  return null;
}

/** Property names that reach prototypes; none of our bodies has them, whatever the depth. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

/**
 * The first property named `__proto__` or `constructor`, as a path like `a.b[2].constructor`;
 * null when there is none. (The validation's `class-transformer` drops such properties silently,
 * so an unknown one of these names would not be refused there.)
 */
export function findForbiddenKey(value: unknown, path = ''): string | null {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findForbiddenKey(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (FORBIDDEN_KEYS.has(k)) return here;
      const found = findForbiddenKey(v, here);
      if (found) return found;
    }
  }
  return null;
}

const UTF8_CHARSET = /^\s*utf-?8\s*$/i;
const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
const FIRST_CHAR = /^[\x20\x09\x0a\x0d]*(.)/s;

/** Parses a JSON body read as bytes; throws a {@link BodyRefused} naming what is wrong. */
export function parseJsonBody(buf: Buffer, contentType: string | undefined): unknown {
  const charset = /;\s*charset=("?)([^";]*)\1/i.exec(contentType ?? '')?.[2];
  if (charset !== undefined && !UTF8_CHARSET.test(charset)) throw new BodyRefused('Request body must be JSON in UTF-8');
  if (!isUtf8(buf)) throw new BodyRefused('Request body is not valid UTF-8');
  assertJsonDepth(buf);
  // A byte-order mark is not JSON, but clients send one; an empty body is an empty object.
  const text = buf.toString('utf8').replace(/^\ufeff/, '');
  if (text.length === 0) return {};
  // Our bodies are objects (or arrays); a bare string or number at the top is a client's mistake.
  const first = FIRST_CHAR.exec(text)?.[1];
  if (first !== '{' && first !== '[') throw new BodyRefused('Request body is not valid JSON');
  let body: unknown;
  try {
    body = secureJsonParse(text, PARSE_OPTIONS);
  } catch (e) {
    const poisoned = /forbidden prototype property/.test((e as Error).message);
    throw new BodyRefused(poisoned ? 'Request body must not contain a __proto__ or constructor.prototype property' : 'Request body is not valid JSON');
  }
  const forbidden = findForbiddenKey(body);
  if (forbidden) throw new BodyRefused(`property ${forbidden} should not exist`);
  const bad = findUnstorableText(body);
  if (bad) throw new BodyRefused(`${bad} must be valid Unicode text without NUL characters`);
  return body;
}

/**
 * Installs the body parsers on the Fastify instance: JSON as above, and any other type read (up
 * to the same limit) and dropped, so a route sees no body rather than a 415 (its validation then
 * names the missing properties).
 */
export function registerBodyParsers(instance: FastifyInstance): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (req, buf, done) => {
    try {
      done(null, parseJsonBody(buf as Buffer, req.headers['content-type']));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_req, _buf, done) => done(null, undefined));
}
