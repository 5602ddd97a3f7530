import { Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { invalidProperty, SqlPool } from '../platform/index.js';
import { Callback } from './callback.entity.js';
import { FEED_PAGE } from './store/feed-page.js';
import { decodePosition, encodePosition, FEED_START, FeedPosition } from './feed-position.js';

type PageRow = Partial<Callback> & { xmax: string; xact: string | null; seq: string | null };

export interface FeedPage {
  items: { callback: Callback; position: string }[];
  next: string;
}

@Injectable()
export class CallbackFeed {
  private readonly pool: Pool;

  constructor(sql: SqlPool) {
    this.pool = sql.pool;
  }

  async page(partnerId: string, after: string | undefined, limit: number): Promise<FeedPage> {
    const from: FeedPosition = after === undefined ? FEED_START : decodePosition(after);
    const { rows } = await this.pool.query<PageRow>({ name: 'callback-feed-page', text: FEED_PAGE, values: [partnerId, from.xact.toString(), from.seq.toString(), limit] });
    if (from.xact >= BigInt(rows[0].xmax)) throw invalidProperty('after is beyond every position the feed has returned');
    const items = rows
      .filter((r) => r.id !== null)
      .map((r) => ({ callback: r as Callback, position: encodePosition({ xact: BigInt(r.xact!), seq: BigInt(r.seq!) }) }));
    return { items, next: items.length > 0 ? items[items.length - 1].position : encodePosition(from) };
  }
}
