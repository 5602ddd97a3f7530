import { Get, Inject } from '@nestjs/common';
import { buildCallbackBody, CALLBACK_MESSAGES, OPERATIONAL_EVENTS, readNextText } from '../callbacks/index.js';
import { APP_CONFIG, type AppConfig } from '../platform/index.js';
import { Page, PortalController } from './portal-page.js';

/**
 * The event catalogue: each callback message and each operational event from the catalogue the
 * OpenAPI document's callbacks are built from (callbacks/event-catalogue.ts), so the two cannot
 * disagree; a message's example body is written by the body builder (its keys in the order sent),
 * shown on lines of its own (it is sent as one line, without spaces).
 */
@PortalController('events')
export class PortalEventsController {
  private readonly messages;
  private readonly events;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const companyProperty = config.variant === 'A' ? 'callback' : 'status_callback';
    this.messages = CALLBACK_MESSAGES.map((m) => ({
      ...m,
      property: m.sentTo.property === 'company' ? companyProperty : m.sentTo.property,
      body: JSON.stringify(JSON.parse(buildCallbackBody(m.code, m.example)), null, 2),
      readNext: readNextText(m, config.variant),
    }));
    this.events = OPERATIONAL_EVENTS.map((e) => ({ ...e, body: JSON.stringify(e.example, null, 2) }));
  }

  @Get()
  @Page('events')
  catalogue() {
    return { title: 'Events', nav: 'events', messages: this.messages, events: this.events };
  }
}
