// First: OpenTelemetry, when configured, must be running before http, pg and ioredis are loaded.
import { stopTracing } from './platform/telemetry/tracing.js';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { checkRedis, ConfigError, ensureDatabase, loadConfig, logFormatOf, RedactingLogger } from './platform/index.js';
import { createHttpAdapter, setupApp } from './setup-app.js';

/** What start-up is doing: said if it ever stops without an answer or an error. */
let stage = 'reading the configuration';

/**
 * Every interface, as Node's own `listen(port)`: IPv6 and IPv4 on `::`, or IPv4 alone where the
 * host has no IPv6 (Fastify, given no host, would listen on localhost only).
 */
async function listenOnAllInterfaces(app: NestFastifyApplication, port: number): Promise<void> {
  try {
    await app.listen(port, '::');
  } catch (e) {
    if (!['EAFNOSUPPORT', 'EADDRNOTAVAIL'].includes((e as { code?: string }).code ?? '')) throw e;
    await app.listen(port, '0.0.0.0');
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = new Logger('funding-service');
  const postgres = `PostgreSQL at ${new URL(config.databaseUrl).host}`;
  stage = `connecting to ${postgres}`;
  await ensureDatabase(config.databaseUrl).catch((e: Error) => {
    throw new Error(`${postgres} is unreachable or refused: ${e.message}`);
  });
  stage = 'connecting to Redis';
  await checkRedis(config.redisUrl, config.queuePrefix, (m) => log.warn(m));
  stage = 'building the service';
  // Nest's own start-up chatter stays off: the service logs one line when it is ready.
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), createHttpAdapter(), {
    bodyParser: false,
    abortOnError: false,
    logger: new RedactingLogger(config.logFormat, ['error', 'warn']),
  });
  setupApp(app, config);
  await listenOnAllInterfaces(app, config.port);
  if (config.secretsKeyDefaulted)
    log.warn('SECRETS_KEY not set; signing secrets are sealed with the public development key');
  if (config.adminTokenGenerated) log.warn(`ADMIN_TOKEN not set; generated for this run: ${config.adminToken}`);
  // SIGTERM/SIGINT: stop taking work, let in-flight deliveries finish and record, then exit 0.
  let closing = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      app
        .close()
        .then(stopTracing)
        .then(
          () => process.exit(0),
          (e: Error) => {
            new RedactingLogger(config.logFormat, []).line('error', `shutdown failed: ${e.message}`);
            process.exit(1);
          },
        );
    });
  }
  stage = 'started';
  const address = app.getHttpServer().address() as { port: number };
  // The one start-up line (Nest's own info logging is off).
  new RedactingLogger(config.logFormat, []).line(
    'log',
    `funding-service ready: role=${config.role} variant=${config.variant} port=${address.port}`,
  );
}

// Node exits 0 once nothing is left to wait for, even with start-up unfinished (a promise no
// connection will ever settle): that must not read as a deliberate stop.
process.on('beforeExit', () => {
  if (stage === 'started') return;
  new RedactingLogger(logFormatOf(), []).line(
    'error',
    `failed to start: start-up stopped while ${stage}, with nothing left to wait for and no error`,
  );
  process.exit(1);
});

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError ? error.message : `failed to start: ${(error as Error)?.message ?? error}`;
  new RedactingLogger(logFormatOf(), []).line('error', message);
  process.exit(1);
});
