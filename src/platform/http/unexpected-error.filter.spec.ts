import { runInNewContext } from 'node:vm';
import { asError, isDatabaseUnavailable } from './unexpected-error.filter';

/** An error as pg or TypeORM throws it. */
const err = (message: string, fields: Record<string, unknown> = {}) => Object.assign(new Error(message), fields);

describe('isDatabaseUnavailable', () => {
  it.each([
    ['connection refused', err('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' })],
    ['connection lost mid-query', err('Connection terminated unexpectedly')],
    ['pool connect timeout', err('timeout exceeded when trying to connect')],
    ['server shutting down', err('terminating connection due to administrator command', { code: '57P01' })],
    ['server starting up', err('the database system is starting up', { code: '57P03' })],
    ['connection failure', err('connection failure', { code: '08006' })],
    ['no connection slot', err('sorry, too many clients already', { code: '53300' })],
    ['wrapped by TypeORM', err('Query failed', { driverError: { code: '57P01' } })],
  ])('%s: yes', (_, e) => expect(isDatabaseUnavailable(e)).toBe(true));

  it.each([
    ['a unique violation', err('duplicate key value violates unique constraint', { code: '23505' })],
    ['an invalid value', err('invalid input syntax for type uuid', { driverError: { code: '22P02' } })],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a message that only mentions a connection', err('Connection settings invalid: terminated')],
  ])('%s: no', (_, e) => expect(isDatabaseUnavailable(e)).toBe(false));
});

describe('asError', () => {
  it('keeps an Error of another realm as it is, code and all (a socket error inside a vm sandbox)', () => {
    const foreign: unknown = runInNewContext("Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })");
    expect(foreign instanceof Error).toBe(false);
    expect(asError(foreign)).toBe(foreign);
    expect(isDatabaseUnavailable(asError(foreign))).toBe(true);
  });

  it('makes an Error of anything else', () => {
    expect(asError('boom').message).toBe('boom');
    expect(asError(null).message).toBe('null');
    expect(asError({ message: 7 }).message).toBe('[object Object]');
  });
});
