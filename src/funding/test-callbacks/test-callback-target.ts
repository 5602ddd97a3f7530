import { CallbackMessage } from '../../callbacks/index.js';
import { DomainError, ErrorCode } from '../../platform/index.js';

export const noTestUrl = (message: CallbackMessage, source: string) =>
  new DomainError(
    'rule',
    ErrorCode.test_callback_no_url,
    `No URL for message ${message} (${CallbackMessage[message]}): ${source} has none registered; pass url`,
  );
