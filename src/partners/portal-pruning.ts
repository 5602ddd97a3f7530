import { Injectable } from '@nestjs/common';
import type { ClientBase } from 'pg';
import { PortalLinkRepository } from './portal-link.repository.js';
import { PortalSessionRepository } from './portal-session.repository.js';

/**
 * The retention pass's part of the portal (src/operations/callback-retention.ts): a batch of links
 * expired over a day ago, then of sessions no longer live, on the pass's connection.
 */
@Injectable()
export class PortalPruning {
  constructor(
    private readonly links: PortalLinkRepository,
    private readonly sessions: PortalSessionRepository,
  ) {}

  /** Up to `limit` rows of each; how many went. */
  async prune(client: Pick<ClientBase, 'query'>, limit: number): Promise<{ links: number; sessions: number }> {
    const links = await this.links.prune(client, limit);
    return { links, sessions: await this.sessions.prune(client, limit) };
  }
}
