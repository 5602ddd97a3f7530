import type { DynamicModule } from '@nestjs/common';
import { CallbacksModule } from '../src/callbacks/index.js';
import { DeliveryModule } from '../src/delivery/index.js';
import { EgressModule } from '../src/egress/index.js';
import { FundingModule } from '../src/funding/index.js';
import { OperationsModule } from '../src/operations/index.js';
import { OperatorsModule } from '../src/operators/index.js';
import { PartnersModule } from '../src/partners/index.js';
import { AppConfig, PlatformModule } from '../src/platform/index.js';
import { PortalModule } from '../src/portal/index.js';
import { bootAlone } from './support/harness.js';

/**
 * No module is global: each boots alone with the modules it declares (and the database the root
 * gives every module), and Nest builds those and no others, in each role. Delivery runs its relay
 * and worker on PostgreSQL and Redis without the funding API.
 */
const MODULES: Array<[string, (config: AppConfig) => DynamicModule, string[]]> = [
  ['platform', (c) => PlatformModule.forRoot(c), []],
  ['egress', (c) => EgressModule.forRoot(c), []],
  ['operators', (c) => OperatorsModule.forRoot(c), []],
  ['partners', (c) => PartnersModule.forRoot(c), ['Egress', 'Operators']],
  ['callbacks', (c) => CallbacksModule.forRoot(c), ['Egress', 'Operators', 'Partners']],
  ['operations', (c) => OperationsModule.forRoot(c), ['Callbacks', 'Egress', 'Operators', 'Partners']],
  ['delivery', (c) => DeliveryModule.forRoot(c), ['Callbacks', 'Egress', 'Operations', 'Operators', 'Partners']],
  [
    'funding',
    (c) => FundingModule.forRoot(c),
    ['Callbacks', 'Delivery', 'Egress', 'Operations', 'Operators', 'Partners'],
  ],
  [
    'portal',
    (c) => PortalModule.forRoot(c),
    ['Callbacks', 'Delivery', 'Egress', 'Funding', 'Operations', 'Operators', 'Partners'],
  ],
];

describe.each(['all', 'api', 'worker'])('ROLE=%s: each module boots alone with its declared imports', (role) => {
  it.each(MODULES)('%s', async (name, module, below) => {
    const own = `${name[0].toUpperCase()}${name.slice(1)}`;
    const expected = [...new Set([own, 'Platform', ...below])].map((m) => `${m}Module`).sort();
    expect(await bootAlone(module, { ROLE: role })).toEqual(expected);
  });
});
