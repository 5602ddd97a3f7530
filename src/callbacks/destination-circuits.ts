/** A destination's circuit as partners and operators see it (API §5, "Isolation between destinations"). */
export type CircuitState = 'closed' | 'open' | 'half_open';

/**
 * The circuit states of one partner's destinations, by origin. The delivery module owns them (its
 * window and breaker decide a state; src/delivery/destinations answers): this is the face it
 * offers modules of its own layer, which may not import it (.dependency-cruiser.cjs), the funding
 * module's list of callback URLs among them. The delivery module provides it (DestinationsService).
 */
export abstract class DestinationCircuits {
  /** Each origin's state; an origin the partner's callbacks never went to is `closed`. */
  abstract statesOf(partnerId: string, origins: string[]): Promise<Map<string, CircuitState>>;
}
