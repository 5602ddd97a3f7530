import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GUIDE_PATH, guidePage, renderGuide } from './partner-guide.js';
import { partnerDocument } from './partner-document.js';

/** The partners' routes alone, in Swagger UI and as a document (`-json`, `-yaml`). */
export const PARTNER_API_PATH = `${GUIDE_PATH}/api`;

/**
 * docs/ of the repository: beside src/ in a checkout, beside dist/src/ in a build (scripts/build.mjs
 * copies the guide and its pictures there), three folders up from this file either way.
 */
const DOCS_DIR = path.join(__dirname, '../../../docs');

/** The pictures the guide shows (`![…](name.png)`, files of docs/), by name. */
function picturesOf(markdown: string): Map<string, Buffer> {
  const names = [...markdown.matchAll(/!\[[^\]]*\]\(([\w.-]+\.png)\)/g)].map((m) => m[1]);
  const found = names.filter((n) => existsSync(path.join(DOCS_DIR, n)));
  return new Map(found.map((n) => [n, readFileSync(path.join(DOCS_DIR, n))]));
}

/**
 * Serves the partner guide, rendered from docs/partners.md once at start, at /docs/partners (its
 * pictures and stylesheet below it) with `headers` (the portal's: a CSP allowing no script, nothing
 * framed or cached, no referrer), and the OpenAPI view of the partners' routes at
 * /docs/partners/api. Both are public: they hold no partner's data (docs/security.md).
 */
export function mountPartnerDocs(
  app: NestFastifyApplication,
  document: OpenAPIObject,
  headers: Readonly<Record<string, string>>,
): void {
  const markdown = readFileSync(path.join(DOCS_DIR, 'partners.md'), 'utf8');
  const pictures = picturesOf(markdown);
  const page = guidePage(renderGuide(markdown, new Set(pictures.keys())), PARTNER_API_PATH);
  const stylesheet = readFileSync(path.join(__dirname, 'guide.css'), 'utf8');
  const instance: FastifyInstance = app.getHttpAdapter().getInstance();
  instance.register((scope: FastifyInstance, _options, done) => {
    scope.addHook('onSend', async (_req, reply) => {
      reply.headers(headers);
    });
    scope.get(GUIDE_PATH, async (_req, reply) => reply.type('text/html; charset=utf-8').send(page));
    scope.get(`${GUIDE_PATH}/guide.css`, async (_req, reply) => reply.type('text/css; charset=utf-8').send(stylesheet));
    for (const [name, bytes] of pictures) {
      scope.get(`${GUIDE_PATH}/${name}`, async (_req, reply) => reply.type('image/png').send(bytes));
    }
    done();
  });
  const at = PARTNER_API_PATH.slice(1);
  SwaggerModule.setup(at, app, partnerDocument(document), { jsonDocumentUrl: `${at}-json` });
}
