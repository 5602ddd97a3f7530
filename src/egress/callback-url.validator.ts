import { Inject, Injectable } from '@nestjs/common';
import dns from 'node:dns';
import { APP_CONFIG, AppConfig, invalidProperty } from '../platform/index.js';
import { DNS_LOOKUP } from './callback-sender.js';
import { GuardOptions, LookupAll, resolveCallbackUrl } from './destination-guard.js';

/** Registration-time check of a callback URL property (the connect-time check is the sender's). */
@Injectable()
export class CallbackUrlValidator {
  private readonly options: GuardOptions;

  private readonly lookupAll: LookupAll;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @Inject(DNS_LOOKUP) lookup: typeof dns.lookup = dns.lookup) {
    this.options = { allowHttp: config.callbackAllowHttp, allowPrivate: config.callbackAllowPrivateTargets };
    this.lookupAll = (host) =>
      new Promise((resolve, reject) =>
        lookup(host, { all: true, verbatim: true }, (err, addresses) =>
          err ? reject(err) : resolve(addresses.map((a) => a.address)),
        ),
      );
  }

  /**
   * `value` in the form a registered URL is stored in (as `check` returns it), to find it among the
   * stored ones without checking it again; text that is no URL as it is (it matches none).
   */
  storedForm(value: string): string {
    try {
      return new URL(value).href;
    } catch {
      return value;
    }
  }

  /**
   * Returns the URL to store, in its normalised (WHATWG-serialised) form, or null when absent;
   * a refused URL is a 400 naming the property.
   */
  async check(property: string, value: string | undefined | null): Promise<string | null> {
    if (value === undefined || value === null) return null;
    const r = await resolveCallbackUrl(value, this.options, this.lookupAll);
    if ('problem' in r) throw invalidProperty(`${property} ${r.problem}`);
    return r.url;
  }
}
