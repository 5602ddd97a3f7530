/** Reading EXPLAIN (ANALYZE, FORMAT JSON) plans in the plans tests. */

export type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

export interface Scan {
  type: string;
  relation: string;
  index?: string;
  cond?: string;
  /** Rows looked at over all its loops, returned or filtered out. */
  examined: number;
  pages: number;
}

/** What each node over `relations` read, over all its loops: its kind, index and condition, the rows it looked at (returned or filtered out), its pages. */
export function scansOf(node: PlanNode, relations: ReadonlySet<string>, out: Scan[] = []): Scan[] {
  const relation = node['Relation Name'] as string | undefined;
  if (relation && relations.has(relation) && String(node['Node Type']).includes('Scan')) {
    const loops = (node['Actual Loops'] as number) ?? 1;
    const seen =
      ((node['Actual Rows'] as number) ?? 0) +
      ((node['Rows Removed by Filter'] as number) ?? 0) +
      ((node['Rows Removed by Index Recheck'] as number) ?? 0);
    const pages = ((node['Shared Hit Blocks'] as number) ?? 0) + ((node['Shared Read Blocks'] as number) ?? 0);
    out.push({
      type: node['Node Type'] as string,
      relation,
      index: node['Index Name'] as string | undefined,
      cond: node['Index Cond'] as string | undefined,
      examined: seen * loops,
      pages,
    });
  }
  for (const child of node.Plans ?? []) scansOf(child, relations, out);
  return out;
}

/** Sort nodes over rows of `relations`: rows sorted were all read first, however few the statement wanted. */
export function sortsOf(node: PlanNode, relations: ReadonlySet<string>, out: string[] = []): string[] {
  if (node['Node Type'] === 'Sort' && scansOf(node, relations).length > 0)
    out.push(
      `Sort (${String(node['Sort Key'])}) over ${scansOf(node, relations)
        .map((x) => x.index ?? x.type)
        .join(', ')}`,
    );
  for (const child of node.Plans ?? []) sortsOf(child, relations, out);
  return out;
}

/** A value as a SQL literal for EXECUTE's arguments (coerced to the statement's parameter types). */
export function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (Array.isArray(v))
    return quote(
      `{${v.map((e) => (e === null ? 'NULL' : `"${text(e).replace(/[\\"]/g, (c) => `\\${c}`)}"`)).join(',')}}`,
    );
  return quote(text(v));
}
const text = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));
const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
