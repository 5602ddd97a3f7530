/** A state machine as data: the allowed next states of each state. */
export type Transitions<S extends string> = Record<S, readonly S[]>;

export function canTransition<S extends string>(table: Transitions<S>, from: S, to: S): boolean {
  return table[from]?.includes(to) ?? false;
}
