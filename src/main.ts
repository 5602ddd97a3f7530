import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { ConfigError, loadConfig } from './config/app-config.js';
import { setupApp } from './setup-app.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = new Logger('funding-service');
  const app = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, abortOnError: false });
  setupApp(app, config);
  await app.listen(config.port);
  if (config.adminTokenGenerated) log.warn(`ADMIN_TOKEN not set; generated for this run: ${config.adminToken}`);
  log.log(`ready: role=${config.role} variant=${config.variant} port=${config.port}`);
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : `failed to start: ${(error as Error)?.message ?? error}`;
  console.error(message);
  process.exit(1);
});
