import { Injectable } from '@nestjs/common';
import { PartnerDirectory, type PartnerPageQuery, type PartnerRecord } from '../../partners/index.js';
import { type DestinationCounts, DestinationSummaries } from '../store/destination-summaries.js';

/** A partner as operators see it: its account (partners/) and its destinations (the callback store's). */
export type PartnerView = PartnerRecord & { destinations: DestinationCounts };

/**
 * The operators' partner look-up. The account comes from the partners module, the destination
 * counts from the callback store (the owner of `destinations`), one statement for a whole page.
 */
@Injectable()
export class PartnerLookup {
  constructor(
    private readonly directory: PartnerDirectory,
    private readonly summaries: DestinationSummaries,
  ) {}

  async find(id: string): Promise<PartnerView> {
    const [view] = await this.withDestinations([await this.directory.find(id)]);
    return view;
  }

  async page(q: PartnerPageQuery): Promise<{ items: PartnerView[]; nextCursor: string | null }> {
    const page = await this.directory.page(q);
    return { items: await this.withDestinations(page.items), nextCursor: page.nextCursor };
  }

  private async withDestinations(partners: PartnerRecord[]): Promise<PartnerView[]> {
    const counts = await this.summaries.destinationCounts(partners.map((p) => p.id));
    return partners.map((p) => ({ ...p, destinations: counts.get(p.id)! }));
  }
}
