import { CALLBACK_MESSAGES, CallbackMessage, CallbackMessageEntry, UrlProperty } from '../../callbacks/index.js';

/** A callback URL property of the funding resources: where it is stored and what it receives. */
export interface UrlColumn {
  /** The resource, as the event catalogue names the one whose URL a message goes to. */
  resource: 'company' | 'limit request' | 'withdrawal request';
  /** The catalogue's name of the property (`company`: the organization's, named per variant). */
  property: UrlProperty;
  table: 'companies' | 'limit_requests' | 'withdrawal_requests';
  column: 'callback_url' | 'status_callback' | 'loan_status_callback';
  /** The callback body's id naming the resource. */
  key: 'companyId' | 'limitRequestId' | 'withdrawalId';
}

/** Every callback URL property of a partner's resources (API §3, "Changing a callback URL"). */
export const URL_COLUMNS: readonly UrlColumn[] = [
  { resource: 'company', property: 'company', table: 'companies', column: 'callback_url', key: 'companyId' },
  {
    resource: 'limit request',
    property: 'status_callback',
    table: 'limit_requests',
    column: 'status_callback',
    key: 'limitRequestId',
  },
  {
    resource: 'withdrawal request',
    property: 'status_callback',
    table: 'withdrawal_requests',
    column: 'status_callback',
    key: 'withdrawalId',
  },
  {
    resource: 'withdrawal request',
    property: 'loan_status_callback',
    table: 'withdrawal_requests',
    column: 'loan_status_callback',
    key: 'withdrawalId',
  },
];

/** The messages a URL property receives: the event catalogue's, its one source. */
export function messagesOf(c: UrlColumn): CallbackMessage[] {
  const sentHere = (e: CallbackMessageEntry) => e.sentTo.resource === c.resource && e.sentTo.property === c.property;
  return CALLBACK_MESSAGES.filter(sentHere).map((e) => e.code);
}

/** The URL property stored in `column` of `table`. */
export function urlColumn(table: UrlColumn['table'], column: UrlColumn['column']): UrlColumn {
  return URL_COLUMNS.find((c) => c.table === table && c.column === column)!;
}
