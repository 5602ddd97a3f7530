import { Inject, Injectable } from '@nestjs/common';
import { invalidProperty } from '../common/domain-error.js';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { checkCallbackUrlResolved, GuardOptions } from './destination-guard.js';

/** Registration-time check of a callback URL property (the connect-time check is the sender's). */
@Injectable()
export class CallbackUrlValidator {
  private readonly options: GuardOptions;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.options = { allowHttp: config.callbackAllowHttp, allowPrivate: config.callbackAllowPrivateTargets };
  }

  /** Returns the URL (or null when absent); a refused URL is a 400 naming the property. */
  async check(property: string, value: string | undefined | null): Promise<string | null> {
    if (value === undefined || value === null) return null;
    const problem = await checkCallbackUrlResolved(value, this.options);
    if (problem) throw invalidProperty(`${property} ${problem}`);
    return value;
  }
}
