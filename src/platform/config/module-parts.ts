import { Abstract, DynamicModule, Provider, Type } from '@nestjs/common';
import type { AppConfig } from './app-config.js';
import { controllersOf } from './variant-controllers.js';

/** A module's parts by the roles that run them (ROLE: `api`, `worker`, or `all` for both). */
export type ModuleParts = {
  controllers?: { any?: Type[]; api?: Type[] };
  providers: { any?: Provider[]; api?: Provider[]; worker?: Provider[] };
  /** What other modules may inject; each role exports those of them it runs (an abstract class: a face another provides). */
  exports?: Array<Type | Abstract<unknown> | symbol>;
};

const tokenOf = (p: Provider) => (typeof p === 'function' ? p : p.provide);

/**
 * A module as one process runs it: the parts of its role, and the controllers of the API variant.
 * Global, so a module reaches another's exports without listing it: which module may use which
 * is dependency-cruiser's to check (.dependency-cruiser.cjs), where the arrows are drawn.
 */
export function moduleFor(module: Type, config: AppConfig, parts: ModuleParts): DynamicModule {
  const api = config.role !== 'worker';
  const worker = config.role !== 'api';
  const { controllers = {}, providers } = parts;
  const provided = [...(providers.any ?? []), ...(api ? (providers.api ?? []) : []), ...(worker ? (providers.worker ?? []) : [])];
  const tokens = new Set(provided.map(tokenOf));
  return {
    module,
    global: true,
    controllers: controllersOf(config.variant, [...(controllers.any ?? []), ...(api ? (controllers.api ?? []) : [])]),
    providers: provided,
    exports: (parts.exports ?? []).filter((t) => tokens.has(t)),
  };
}
