import { SetMetadata, Type } from '@nestjs/common';
import type { ApiVariant } from './app-config.js';

const VARIANT_KEY = 'funding:variant';

/**
 * Marks a controller as existing only in one API variant. Elsewhere it is not registered at all,
 * so its routes answer Nest's own 404 and the OpenAPI document, which is scanned from the
 * registered controllers, does not list them.
 */
export const OnlyVariant = (variant: ApiVariant) => SetMetadata(VARIANT_KEY, variant);

/** The controllers that exist in `variant`: unmarked ones and those marked for it. */
export function controllersOf(variant: ApiVariant, controllers: Type<unknown>[]): Type<unknown>[] {
  return controllers.filter((c) => {
    const only = Reflect.getMetadata(VARIANT_KEY, c) as ApiVariant | undefined;
    return only === undefined || only === variant;
  });
}
