// The request body, refused before anything reads it when it could only cause trouble further
// in: more than 64 KiB, bytes that are not UTF-8, JSON nested deeper than any of our bodies
// (JSON.parse and every walker after it recurse: a few thousand levels overflow the stack), and
// text PostgreSQL cannot store (NUL) or that is not Unicode (a lone surrogate from a \ud800 escape).
import { isUtf8 } from 'node:buffer';
import express, { NextFunction, Request, Response } from 'express';

/** Our bodies are flat objects; 32 leaves room for clients' envelopes and stays far from the stack's limit. */
export const MAX_JSON_DEPTH = 32;

class BodyRefused extends Error {
  readonly status = 400;
  readonly type = 'body.refused';
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

const badRequest = (res: Response, message: string) => res.status(400).json({ statusCode: 400, error: 'Bad Request', message: [message] });

/** The JSON body parser: 64 KiB, UTF-8, bounded depth, storable text; failures answer in Nest's error shape. */
export function jsonBody() {
  const parse = express.json({
    limit: '64kb',
    verify: (_req, _res, buf) => {
      if (!isUtf8(buf)) throw new BodyRefused('Request body is not valid UTF-8');
      assertJsonDepth(buf);
    },
  });
  return (req: Request, res: Response, next: NextFunction) =>
    parse(req, res, (err?: { status?: number; type?: string; message?: string }) => {
      if (err) {
        if (err.status === 413) {
          return res.status(413).json({ statusCode: 413, error: 'Payload Too Large', message: 'Request body exceeds 64 KiB' });
        }
        // A charset other than UTF-8 (body-parser's 415) is bad input like any other: 400, as documented.
        if (err.status === 415) return badRequest(res, 'Request body must be JSON in UTF-8');
        return badRequest(res, err instanceof BodyRefused ? err.message : 'Request body is not valid JSON');
      }
      const bad = findUnstorableText(req.body);
      if (bad) return badRequest(res, `${bad} must be valid Unicode text without NUL characters`);
      next();
    });
}
