import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, SetMatchType } from 'openapi-backend';
import type request from 'supertest';

// Every response an end-to-end test receives is checked against the service's own /docs-json:
// the status must be documented for the operation, the content type too, a JSON body must match
// its schema (with no property the schema does not name) and the documented headers must be
// there. openapi-backend routes a request to its operation and validates the body and headers
// (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses, with the standard formats: uuid, date-time,
// uri); @seriousme/openapi-schema-validator checks the document itself first.

/** What the checker needs of a response (supertest's Response has it). */
export interface SeenResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  text?: string;
}

/** Paths served outside the API, which the document does not describe. */
const OUTSIDE_THE_DOCUMENT = [
  /^\/docs(-json)?(\/|$)/, // the document itself and its UI
  /^\/admin\/queues\/./, // bull-board's own assets and API, below its documented page
  /^\/portal(\/|$)/i, // the partner portal's HTML pages (docs/partners.md), a browser's, not the API
];

export interface ApiContract {
  /** A readable description of how the response differs from the document, or null when it matches. */
  check(method: string, path: string, res: SeenResponse): string | null;
}

/** Validates the document, then builds the response checker from it. */
export async function loadApiContract(document: object): Promise<ApiContract> {
  const result = await new Validator().validate(structuredClone(document) as Parameters<Validator['validate']>[0]);
  if (!result.valid) {
    throw new Error(
      `/docs-json is not a valid OpenAPI document:\n${JSON.stringify(result.errors, null, 2).slice(0, 4000)}`,
    );
  }
  const api = new OpenAPIBackend({
    definition: closeObjects(structuredClone(document)) as never,
    // quick: skips openapi-backend's own check of the document (done above by a validator that
    // knows OpenAPI 3.1) and compiles each operation's validators when first used.
    quick: true,
    strict: true,
    customizeAjv: (_original, options) => {
      const ajv = new Ajv2020({ ...options, strict: false, allErrors: true });
      addFormats(ajv);
      return ajv;
    },
  });
  await api.init();
  return { check: (method, path, res) => check(api, method.toLowerCase(), path, res) };
}

/**
 * A response schema names every property the service sends: the checker treats any other
 * property as a mismatch (the document itself stays open, as clients must tolerate additions).
 */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) node.forEach(closeObjects);
  else if (node && typeof node === 'object') {
    const schema = node as Record<string, unknown>;
    for (const child of Object.values(schema)) closeObjects(child);
    if (schema.type === 'object' && schema.properties && schema.additionalProperties === undefined)
      schema.additionalProperties = false;
  }
  return node;
}

function check(api: OpenAPIBackend, method: string, path: string, res: SeenResponse): string | null {
  if (OUTSIDE_THE_DOCUMENT.some((p) => p.test(path))) return null;
  const where = `${method.toUpperCase()} ${path} → ${res.status}`;
  const problem = (what: string) =>
    `OpenAPI mismatch: ${where}: ${what}\nresponse body: ${bodyText(res).slice(0, 600)}`;
  const operation = api.matchOperation({ method, path, headers: {} });
  if (!operation) {
    // A route that does not exist answers Nest's own 404, which the document need not list.
    const body = res.body as { message?: unknown } | undefined;
    if (
      res.status === 404 &&
      typeof body?.message === 'string' &&
      body.message.startsWith(`Cannot ${method.toUpperCase()} `)
    )
      return null;
    return problem(
      `/docs-json documents no ${method.toUpperCase()} operation on this path; document the route (@Doc and @ApiErrors from src/platform/openapi/api-doc.ts)`,
    );
  }
  const responses = (operation.responses ?? {}) as Record<
    string,
    { content?: Record<string, unknown>; headers?: Record<string, { required?: boolean }> }
  >;
  const documented =
    responses[String(res.status)] ?? responses[`${Math.floor(res.status / 100)}XX`] ?? responses.default;
  const name = `operation ${operation.operationId}`;
  if (!documented) {
    return problem(
      `status ${res.status} is not documented for ${name} (documented: ${Object.keys(responses).join(', ')}); add it with @ApiErrors`,
    );
  }
  const mediaType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  const hasBody = method !== 'head' && (res.text ?? '').length > 0;
  const contentTypes = Object.keys(documented.content ?? {});
  if (hasBody && !contentTypes.includes(mediaType)) {
    return problem(
      `content type "${mediaType}" is not documented for ${res.status} of ${name} (documented: ${contentTypes.join(', ') || 'no body'})`,
    );
  }
  if (!hasBody && contentTypes.length > 0 && method !== 'head')
    return problem(`no body, but ${name} documents ${contentTypes.join(', ')} for ${res.status}`);
  const errors: string[] = [];
  if (hasBody && mediaType === 'application/json') {
    const result = api.validateResponse(res.body, operation, res.status);
    for (const e of result.errors ?? [])
      errors.push(`body${e.instancePath || ''} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }
  for (const [header, spec] of Object.entries(documented.headers ?? {})) {
    if (spec.required && res.headers[header.toLowerCase()] === undefined)
      errors.push(`header ${header} is documented as required but missing`);
  }
  const headers = api.validateResponseHeaders(res.headers, operation, {
    statusCode: res.status,
    setMatchType: SetMatchType.Any,
  });
  for (const e of headers.errors ?? [])
    errors.push(`header ${(e.instancePath || '').replace(/^\/headers\//, '')} ${e.message}`);
  return errors.length ? problem(`the response does not match ${name}:\n  ${errors.join('\n  ')}`) : null;
}

function bodyText(res: SeenResponse): string {
  if (res.text !== undefined) return res.text;
  return JSON.stringify(res.body) ?? '';
}

/** Makes a supertest request fail with the contract's message when its response does not match. */
export function checked(test: request.Test, contract: ApiContract): request.Test {
  const { method, url } = test as unknown as { method: string; url: string };
  const end = test.end.bind(test);
  test.end = ((fn?: (err: unknown, res: request.Response) => void) =>
    end((err, res) => {
      let mismatch: Error | null = null;
      try {
        const problem = !err && res ? contract.check(method, new URL(url).pathname, res) : null;
        if (problem) mismatch = new Error(problem);
      } catch (e) {
        mismatch = e as Error; // a bug of the checker itself must fail the test too, not hang it
      }
      fn?.(mismatch ?? err, res);
    })) as typeof test.end;
  return test;
}
