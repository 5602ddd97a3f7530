/** Message codes exactly as the specification numbers and names them. */
export enum CallbackMessage {
  CreditLimitUpdated = 0,
  WithdrawalRequestStatusChanged = 1,
  CreditBalanceUpdated = 2,
  LimitRequestStatusChanged = 3,
  LoanPaymentRegistered = 4,
}

export interface CallbackIds {
  withdrawalId: string | null;
  companyId: string;
  limitRequestId: string | null;
  loanId: string | null;
}

/**
 * The callback body: exactly five keys in the contract's order. Serialized once when the
 * change is recorded; the sender signs and sends these very bytes.
 */
export function buildCallbackBody(message: CallbackMessage, ids: CallbackIds): string {
  return JSON.stringify({
    message,
    withdrawalId: ids.withdrawalId,
    companyId: ids.companyId,
    limitRequestId: ids.limitRequestId,
    loanId: ids.loanId,
  });
}
