/** Helpers for the SQL the hot paths write by hand (the ORM is not on them). */

/**
 * A timestamp column as an exact key (microseconds since the epoch, as text), for comparing what
 * was read before with what the row holds now: a job's lease, a schedule's start. Every statement
 * writes it this one way, so equal times give equal keys.
 */
export const microsKey = (column: string): string => `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;

/** One input column of a statement: its name, its SQL type, and its value for one item. */
export interface Column<T> {
  name: string;
  type: string;
  value: (item: T) => unknown;
}

/**
 * A statement's input as rows of `unnest` over one array parameter per column. The SQL and the
 * parameters come from the same list of columns, so their order cannot drift apart.
 */
export class InputColumns<T> {
  constructor(private readonly columns: Column<T>[]) {}

  /** How many parameters the input takes. */
  get count(): number {
    return this.columns.length;
  }

  /** `unnest($first::type[], …) AS alias(name, …)`. */
  unnest(alias: string, first = 1): string {
    return `unnest(${this.arrays(first)}) AS ${alias}(${this.names})`;
  }

  /** The parameters as typed arrays, `$first::type[], …`. */
  arrays(first: number): string {
    return this.columns.map((c, i) => `$${first + i}::${c.type}[]`).join(', ');
  }

  /** The columns' names, `name, …`. */
  get names(): string {
    return this.columns.map((c) => c.name).join(', ');
  }

  /** The parameters for `items`: one array per column, in the columns' order. */
  params(items: T[]): unknown[][] {
    return this.columns.map((c) => items.map(c.value));
  }
}

/**
 * A part of a larger statement that another repository owns (the INSERT of the callbacks a row
 * write records): its text, with its parameters numbered from the position the composing statement
 * gave it, and their values for its argument, in that order. The composing statement puts the part's
 * values right after its own; a further part starts at `next`. No caller counts another's parameters.
 */
export interface StatementPart<A> {
  text: string;
  /** The position after its last parameter: where a part after it starts. */
  next: number;
  values(arg: A): unknown[];
}
