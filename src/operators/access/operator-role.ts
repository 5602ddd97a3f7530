/**
 * What an operator may do (docs/operations.md, "Operators, roles and the audit log"): each role
 * holds the one before it.
 * - `viewer`: every read under /admin (operators and the audit log included), the dashboard read-only;
 * - `operator`: also every state change, redelivery, probe, and the dashboard's actions;
 * - `admin`: also partners (creation, secret and key rotation) and operators.
 */
export const OPERATOR_ROLES = ['viewer', 'operator', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export function isOperatorRole(value: unknown): value is OperatorRole {
  return typeof value === 'string' && (OPERATOR_ROLES as readonly string[]).includes(value);
}

/** Whether an operator holding `held` may do what needs `needed`. */
export function roleAllows(held: OperatorRole, needed: OperatorRole): boolean {
  return OPERATOR_ROLES.indexOf(held) >= OPERATOR_ROLES.indexOf(needed);
}

/** An authenticated operator, as the guard and the dashboard know it. */
export interface OperatorIdentity {
  id: string;
  name: string;
  role: OperatorRole;
}
