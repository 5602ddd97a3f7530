/**
 * A callback's status as stored (docs/architecture.md, "Callback states") and as the API shows it:
 * an admitted callback (`sending`) is on its way like a waiting one, so it is shown `pending`.
 */
export const CALLBACK_STATUSES = ['pending', 'sending', 'delivered', 'failed'] as const;
export type CallbackStatus = (typeof CALLBACK_STATUSES)[number];

/** The statuses the API shows and filters by. */
export const SHOWN_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type ShownStatus = (typeof SHOWN_STATUSES)[number];

/** How the API shows a stored status. */
export function shownStatus(status: CallbackStatus): ShownStatus {
  return status === 'sending' ? 'pending' : status;
}

/** The stored statuses a shown one stands for (a list's filter). */
export function storedStatuses(shown: ShownStatus): CallbackStatus[] {
  return CALLBACK_STATUSES.filter((s) => shownStatus(s) === shown);
}
