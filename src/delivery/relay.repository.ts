import { Injectable } from '@nestjs/common';
import { CALLBACKS_CHANNEL, type SqlSession } from '../platform/index.js';

/** Any fixed number (migrations use 727_001, retention 727_002): one process at a time leads admission. */
const ADMISSION_LOCK = 727_003;

/** The relay's statements (callback-relay.ts), on its own connection's session. */
@Injectable()
export class RelayRepository {
  /** Listens for admission's wake-ups (`NOTIFY funding_callbacks`) on the relay's connection. */
  async listen(session: SqlSession): Promise<void> {
    await session.query({ text: `LISTEN ${CALLBACKS_CHANNEL}` });
  }

  /** Whether the relay's connection now holds the admission lock (it leads admission). */
  async tryLock(session: SqlSession): Promise<boolean> {
    const { rows } = await session.query<{ locked: boolean }>({
      text: 'SELECT pg_try_advisory_lock($1) AS locked',
      values: [ADMISSION_LOCK],
    });
    return rows[0].locked;
  }
}
