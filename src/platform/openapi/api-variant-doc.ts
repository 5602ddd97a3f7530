import type { ApiVariant } from '../config/app-config.js';

const MARK = 'x-variant';

/**
 * Marks a part of the OpenAPI document (a schema property, a callback) as existing in one API
 * variant only: `keepVariant` drops it from the other variant's document.
 */
export const variantOnly = (variant: ApiVariant) => ({ [MARK]: variant }) as Record<typeof MARK, ApiVariant>;

/**
 * The document of one variant: every part marked for the other variant removed (and from the
 * `required` list of its schema), and the marks themselves removed. Routes of the other variant
 * are already absent: their controllers are not registered (config/variant-controllers.ts).
 */
export function keepVariant<T extends object>(document: T, variant: ApiVariant): T {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const object = node as Record<string, unknown>;
    for (const [key, child] of Object.entries(object)) {
      const mark = child && typeof child === 'object' ? (child as Record<string, unknown>)[MARK] : undefined;
      if (mark !== undefined && mark !== variant) {
        delete object[key];
        continue;
      }
      walk(child);
    }
    delete object[MARK];
    // `properties` is the map a removed property lived in; its schema holds the `required` list.
    const properties = object.properties as Record<string, unknown> | undefined;
    if (properties && Array.isArray(object.required))
      object.required = object.required.filter((name) => name in properties);
  };
  walk(document);
  return document;
}
