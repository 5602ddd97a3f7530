import { Abstract, DynamicModule, Provider, Type } from '@nestjs/common';
import type { AppConfig } from './app-config.js';
import { controllersOf } from './variant-controllers.js';

/** A module's parts by the roles that run them (ROLE: `api`, `worker`, or `all` for both). */
export type ModuleParts = {
  /** The modules whose exports this one injects, each built for the same configuration. */
  imports?: DynamicModule[];
  controllers?: { any?: Type[]; api?: Type[] };
  providers: { any?: Provider[]; api?: Provider[]; worker?: Provider[] };
  /**
   * What other modules may inject; each role exports those of them it runs (an abstract class: a
   * face another provides).
   */
  exports?: Array<Type | Abstract<unknown> | symbol>;
};

const tokenOf = (p: Provider) => (typeof p === 'function' ? p : p.provide);

/** Each configuration's modules, built once: Nest tells two dynamic modules apart by reference. */
const built = new WeakMap<AppConfig, Map<Type, DynamicModule>>();

/**
 * A module as one process runs it: the parts of its role, and the controllers of the API variant.
 * Not global: a module reaches only the exports of the modules it imports, so Nest's graph is the
 * one the code draws (and dependency-cruiser checks, .dependency-cruiser.cjs). Built once per
 * configuration, so every module importing another shares its one instance.
 */
export function moduleFor(module: Type, config: AppConfig, parts: ModuleParts): DynamicModule {
  const modules = built.get(config) ?? new Map<Type, DynamicModule>();
  built.set(config, modules);
  const known = modules.get(module);
  if (known) return known;
  const api = config.role !== 'worker';
  const worker = config.role !== 'api';
  const { controllers = {}, providers } = parts;
  const provided = [
    ...(providers.any ?? []),
    ...(api ? (providers.api ?? []) : []),
    ...(worker ? (providers.worker ?? []) : []),
  ];
  const tokens = new Set(provided.map(tokenOf));
  const dynamic: DynamicModule = {
    module,
    imports: parts.imports ?? [],
    controllers: controllersOf(config.variant, [...(controllers.any ?? []), ...(api ? (controllers.api ?? []) : [])]),
    providers: provided,
    exports: (parts.exports ?? []).filter((t) => tokens.has(t)),
  };
  modules.set(module, dynamic);
  return dynamic;
}
