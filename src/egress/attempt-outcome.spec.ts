import { AttemptOutcome, breakerResult, isFinal, isRetryable, isSuccess, isSuccessStatus } from './attempt-outcome.js';

describe('the outcome rules', () => {
  // [outcome, success, retryable, final, how it counts for the window]
  it.each<[AttemptOutcome, boolean, boolean, boolean, string]>([
    [{ kind: 'http', statusCode: 200 }, true, false, false, 'ok'],
    [{ kind: 'http', statusCode: 204 }, true, false, false, 'ok'],
    [{ kind: 'http', statusCode: 299 }, true, false, false, 'ok'],
    [{ kind: 'http', statusCode: 199 }, false, true, false, 'answered'],
    [{ kind: 'http', statusCode: 300 }, false, true, false, 'answered'],
    [{ kind: 'http', statusCode: 302 }, false, true, false, 'answered'],
    [{ kind: 'http', statusCode: 400 }, false, true, false, 'answered'],
    [{ kind: 'http', statusCode: 404 }, false, true, false, 'answered'],
    [{ kind: 'http', statusCode: 410 }, false, false, true, 'answered'],
    [{ kind: 'http', statusCode: 429 }, false, true, false, 'fail'],
    [{ kind: 'http', statusCode: 500 }, false, true, false, 'fail'],
    [{ kind: 'http', statusCode: 503 }, false, true, false, 'fail'],
    [{ kind: 'timeout' }, false, true, false, 'silent'],
    [{ kind: 'network' }, false, true, false, 'fail'],
    [{ kind: 'tls' }, false, true, false, 'fail'],
    [{ kind: 'refused' }, false, false, true, 'none'],
  ])('%j: success %s, retryable %s, final %s, counts %s', (o, success, retryable, final, counts) => {
    expect([isSuccess(o), isRetryable(o), isFinal(o), breakerResult(o)]).toEqual([success, retryable, final, counts]);
  });

  it('judges a recorded status code (no outcome kind) as an answer of that status', () => {
    expect([null, 100, 200, 226, 299, 300, 500].map(isSuccessStatus)).toEqual([
      false,
      false,
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
