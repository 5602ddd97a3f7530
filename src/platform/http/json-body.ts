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
      if (c === 0x5c)
        i++; // backslash: the next byte is escaped, whatever it is
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) throw new BodyRefused(`Request body nests JSON deeper than ${max} levels`);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Text without any of these is storable as it is: one scan for almost every string. */
// eslint-disable-next-line no-control-regex -- NUL is what it looks for
const SUSPECT = /[\u0000\ud800-\udfff]/;

/** Whether text can be stored and read back as it is: Unicode without NUL. */
export function isStorableText(s: string): boolean {
  return !SUSPECT.test(s) || (!s.includes('\u0000') && !LONE_SURROGATE.test(s));
}

/** Property names that reach prototypes; none of our bodies has them, whatever the depth. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

/** What is wrong where: the path's segments innermost first (built only for a body refused). */
interface Problem {
  kind: 'forbidden name' | 'unstorable name' | 'unstorable text';
  at: (string | number)[];
}

function scan(value: unknown): Problem | null {
  if (typeof value === 'string') return isStorableText(value) ? null : { kind: 'unstorable text', at: [] };
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = scan(value[i]);
      if (found) return (found.at.push(i), found);
    }
    return null;
  }
  for (const k of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(k)) return { kind: 'forbidden name', at: [k] };
    if (!isStorableText(k)) return { kind: 'unstorable name', at: [] };
    const found = scan((value as Record<string, unknown>)[k]);
    if (found) return (found.at.push(k), found);
  }
  return null;
}

const pathOf = (at: (string | number)[]) =>
  at.reduceRight<string>((path, s) => (typeof s === 'number' ? `${path}[${s}]` : path ? `${path}.${s}` : s), '');

/**
 * Why a parsed body may not go further, naming where (`a.b[2]`), or null: a property named
 * `__proto__` or `constructor` at any depth (the validation's `class-transformer` drops such
 * properties silently, so an unknown one of these names would not be refused there), and any
 * string or property name that is not storable text. One walk; nothing is allocated for a body
 * that passes.
 */
export function bodyProblem(body: unknown): string | null {
  const found = scan(body);
  if (!found) return null;
  const path = pathOf(found.at);
  if (found.kind === 'forbidden name') return `property ${path} should not exist`;
  const what = found.kind === 'unstorable name' ? `a property name${path ? ` in ${path}` : ''}` : path || 'body';
  return `${what} must be valid Unicode text without NUL characters`;
}

const UTF8_CHARSET = /^\s*utf-?8\s*$/i;
const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
const FIRST_CHAR = /^[ \t\n\r]*(.)/s;

/** Parses a JSON body read as bytes; throws a {@link BodyRefused} naming what is wrong. */
export function parseJsonBody(buf: Buffer, contentType: string | undefined): unknown {
  const charset = contentType?.includes(';') ? /;\s*charset=("?)([^";]*)\1/i.exec(contentType)?.[2] : undefined;
  if (charset !== undefined && !UTF8_CHARSET.test(charset)) throw new BodyRefused('Request body must be JSON in UTF-8');
  if (!isUtf8(buf)) throw new BodyRefused('Request body is not valid UTF-8');
  assertJsonDepth(buf);
  // A byte-order mark is not JSON, but clients send one; an empty body is an empty object.
  const text = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? buf.toString('utf8', 3) : buf.toString('utf8');
  if (text.length === 0) return {};
  // Our bodies are objects (or arrays); a bare string or number at the top is a client's mistake.
  const first = FIRST_CHAR.exec(text)?.[1];
  if (first !== '{' && first !== '[') throw new BodyRefused('Request body is not valid JSON');
  let body: unknown;
  try {
    body = secureJsonParse(text, PARSE_OPTIONS);
  } catch (e) {
    const poisoned = /forbidden prototype property/.test((e as Error).message);
    throw new BodyRefused(
      poisoned
        ? 'Request body must not contain a __proto__ or constructor.prototype property'
        : 'Request body is not valid JSON',
    );
  }
  const problem = bodyProblem(body);
  if (problem) throw new BodyRefused(problem);
  return body;
}

/**
 * Installs the body parsers on the Fastify instance: JSON as above, and any other type read (up
 * to the same limit) and dropped, so a route sees no body rather than a 415 (its validation then
 * names the missing properties).
 */
export function registerBodyParsers(instance: FastifyInstance): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES },
    (req, buf, done) => {
      try {
        done(null, parseJsonBody(buf as Buffer, req.headers['content-type']));
      } catch (e) {
        done(e as Error, undefined);
      }
    },
  );
  instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_req, _buf, done) =>
    done(null, undefined),
  );
}
