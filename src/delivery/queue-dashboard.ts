import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { isOperator } from '../partners/auth.guards.js';
import { CallbackQueue } from './callback-queue.js';

export const DASHBOARD_PATH = '/admin/queues';

/** bull-board behind the operator credential; a browser gets the Basic prompt. */
export function mountQueueDashboard(app: INestApplication, config: AppConfig): void {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: [new BullMQAdapter(app.get(CallbackQueue).queue, { readOnlyMode: false })], serverAdapter: adapter });
  const guard = (req: Request, res: Response, next: NextFunction) => {
    if (isOperator(req.headers.authorization, config.adminToken, true)) return next();
    res
      .status(401)
      .setHeader('WWW-Authenticate', 'Basic realm="funding-service", charset="UTF-8"')
      .json({ statusCode: 401, error: 'Unauthorized', message: 'Operator credentials are required (Bearer ADMIN_TOKEN, or Basic admin:ADMIN_TOKEN)' });
  };
  app.use(DASHBOARD_PATH, guard, adapter.getRouter());
}
