import type { OpenAPIObject } from '@nestjs/swagger';

/** Every `$ref` a part of the document names. */
function refsIn(value: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.add(v);
      else refsIn(v, out);
    }
  }
  return out;
}

const SCHEMA_REF = '#/components/schemas/';

const PARTNER_DESCRIPTION =
  'The partner API (/v1) and the signed callbacks and operational events it sends, described as OpenAPI ' +
  'callbacks on the operations that register their URLs. The guide to integrating (verifying signatures, ' +
  'de-duplicating on webhook-id, retries, redelivery, moving a receiver): /docs/partners.';

type Secured = { security?: object[] };

/** Whether a path is the partners' (the /v1 API, whose operations carry the callbacks they send). */
export const isPartnerPath = (path: string) => path.startsWith('/v1/');

/**
 * The OpenAPI document of the partners' routes alone (/docs/partners/api): the /v1 paths with the
 * callbacks their operations describe, the schemas those name (and the schemas those name), their
 * tags and their security scheme; nothing of /admin, the dashboard or the operations endpoints.
 */
export function partnerDocument(document: OpenAPIObject): OpenAPIObject {
  const paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => isPartnerPath(path)));
  const all = document.components?.schemas ?? {};
  const names = new Set<string>();
  let pending = [...refsIn(paths, new Set())];
  while (pending.length > 0) {
    const next: string[] = [];
    for (const ref of pending) {
      const name = ref.startsWith(SCHEMA_REF) ? ref.slice(SCHEMA_REF.length) : null;
      if (name === null || names.has(name) || !(name in all)) continue;
      names.add(name);
      next.push(...refsIn(all[name], new Set()));
    }
    pending = next;
  }
  const tags = new Set(Object.values(paths).flatMap(tagsOf));
  const schemes = document.components?.securitySchemes ?? {};
  const operations = Object.values(paths).flatMap((item) => Object.values(item as Record<string, Secured>));
  const used = new Set(operations.flatMap((op) => (op.security ?? []).flatMap(Object.keys)));
  return {
    ...document,
    info: { ...document.info, title: `${document.info.title}: partner API`, description: PARTNER_DESCRIPTION },
    tags: (document.tags ?? []).filter((t) => tags.has(t.name)),
    paths,
    components: {
      ...document.components,
      schemas: Object.fromEntries(Object.entries(all).filter(([name]) => names.has(name))),
      securitySchemes: Object.fromEntries(Object.entries(schemes).filter(([name]) => used.has(name))),
    },
  };
}

/** The tags of a path's operations. */
const tagsOf = (item: unknown): string[] =>
  Object.values(item as Record<string, { tags?: string[] }>).flatMap((op) => op.tags ?? []);

/**
 * The full document (/docs) with the partners' routes first: /v1 paths, then the rest in their
 * order; tags likewise, so Swagger UI shows a partner's groups before the operators'.
 */
export function partnersFirst(document: OpenAPIObject): OpenAPIObject {
  const entries = Object.entries(document.paths);
  const partners = entries.filter(([p]) => isPartnerPath(p));
  const paths = Object.fromEntries([...partners, ...entries.filter(([p]) => !isPartnerPath(p))]);
  const order = [...new Set(Object.values(paths).flatMap(tagsOf))];
  const known = new Map((document.tags ?? []).map((t) => [t.name, t]));
  const partnerTags = new Set(partners.flatMap(([, item]) => tagsOf(item)));
  const described = (name: string) => ({
    name,
    description: partnerTags.has(name) ? `For partners: the /v1 routes of ${name}` : `For operators: ${name}`,
  });
  return { ...document, paths, tags: order.map((name) => known.get(name) ?? described(name)) };
}
