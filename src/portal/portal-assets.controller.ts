import { Get, Header } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Access } from '../operators/index.js';
import { PortalController } from './portal-page.js';
import { PORTAL_VIEWS } from './portal-views.js';

const read = (name: string) => readFileSync(path.join(PORTAL_VIEWS, name), 'utf8');

/**
 * The portal's stylesheet and its one script (the CSP allows no inline style or script: both come
 * from here), to any browser: they hold nothing of a partner's.
 */
@PortalController()
export class PortalAssetsController {
  private readonly stylesheet = read('portal.css');
  private readonly script = read('portal.js');

  @Get('portal.css')
  @Access.portalVisitor()
  @Header('Content-Type', 'text/css; charset=utf-8')
  css(): string {
    return this.stylesheet;
  }

  @Get('portal.js')
  @Access.portalVisitor()
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  js(): string {
    return this.script;
  }
}
