import { INestApplication, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import type { OperatorRole } from '../../src/operators/access/operator-role.js';

export interface AdminRoute {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** As Nest declares it: `/admin/v1/operators/:operatorId`. */
  path: string;
}

const join = (...parts: string[]) =>
  `/${parts
    .flatMap((p) => p.split('/'))
    .filter(Boolean)
    .join('/')}`;

/**
 * Every route under /admin that the application's controllers declare, read from Nest's own
 * metadata (not from the OpenAPI document, so a route left out of the document is found too).
 */
export function nestAdminRoutes(app: INestApplication): AdminRoute[] {
  const routes: AdminRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!type) continue;
      const base = [Reflect.getMetadata(PATH_METADATA, type) as string | string[]].flat();
      for (
        let proto: unknown = type.prototype;
        proto && proto !== Object.prototype;
        proto = Object.getPrototypeOf(proto)
      ) {
        for (const name of Object.getOwnPropertyNames(proto)) {
          const handler = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
          if (typeof handler !== 'function' || name === 'constructor') continue;
          const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
          if (method === undefined) continue;
          for (const b of base) {
            for (const p of [Reflect.getMetadata(PATH_METADATA, handler) as string | string[]].flat()) {
              const path = join(b, p);
              if (path.startsWith('/admin/'))
                routes.push({ method: RequestMethod[method].toLowerCase() as AdminRoute['method'], path });
            }
          }
        }
      }
    }
  }
  return dedupe(routes);
}

/** The OpenAPI document's /admin operations, in Nest's path form. */
export function documentedAdminRoutes(document: { paths: Record<string, Record<string, unknown>> }): AdminRoute[] {
  const routes: AdminRoute[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/admin/')) continue;
    for (const method of ['get', 'post', 'patch', 'put', 'delete'] as const) {
      if (item[method]) routes.push({ method, path: path.replace(/\{(\w+)\}/g, ':$1') });
    }
  }
  return dedupe(routes);
}

function dedupe(routes: AdminRoute[]): AdminRoute[] {
  const seen = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));
  return [...seen.keys()].sort().map((k) => seen.get(k)!);
}

/**
 * The role a route needs, by the rule of docs/operations.md (not read from the route's own
 * declaration, which this checks): reads are for viewers (the partner look-up, GET
 * /admin/v1/partners and /admin/v1/partners/:partnerId, included: on call finds who an alert names);
 * partners and operators are managed by admins; every other change is an operator's.
 */
export function expectedRole(route: AdminRoute): OperatorRole {
  if (route.method === 'get') return 'viewer';
  // A partner's portal links and sessions are day-to-day support, not account management.
  if (/^\/admin\/v1\/partners\/:partnerId\/portal-(links|sessions)$/.test(route.path)) return 'operator';
  if (/^\/admin\/v1\/(partners|operators)(\/|$)/.test(route.path)) return 'admin';
  return 'operator';
}
