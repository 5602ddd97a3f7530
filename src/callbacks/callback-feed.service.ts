import { Injectable } from '@nestjs/common';
import { invalidProperty } from '../platform/index.js';
import { Callback } from './callback.entity.js';
import type { OpenCircuits } from './circuit-wait.js';
import { FeedStore } from './store/feed-page.js';
import { CallbackReadRepository } from './store/reads.js';
import { decodePosition, encodePosition, FEED_START, FeedPosition } from './feed-position.js';

export interface FeedPage {
  items: { callback: Callback; position: string }[];
  next: string;
  /** The open circuits the page's callbacks wait behind (callbackView). */
  open: OpenCircuits;
}

@Injectable()
export class CallbackFeed {
  constructor(
    private readonly store: FeedStore,
    private readonly reads: CallbackReadRepository,
  ) {}

  async page(partnerId: string, after: string | undefined, limit: number): Promise<FeedPage> {
    const from: FeedPosition = after === undefined ? FEED_START : decodePosition(after);
    const rows = await this.store.page(partnerId, from, limit);
    if (from.xact >= BigInt(rows[0].xmax))
      throw invalidProperty('after is beyond every position the feed has returned');
    const items = rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        callback: r as Callback,
        position: encodePosition({ xact: BigInt(r.xact!), seq: BigInt(r.seq) }),
      }));
    const open = await this.reads.openCircuitsOf(items.map((i) => i.callback.destination));
    return { items, next: items.length > 0 ? items[items.length - 1].position : encodePosition(from), open };
  }
}
