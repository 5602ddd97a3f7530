import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { EgressModule } from '../egress/index.js';
import { OperatorsModule } from '../operators/index.js';
import { ClientCertificateController } from './client-certificate.controller.js';
import { ClientCertificateRepository } from './client-certificate.repository.js';
import { ClientCertificateExpiries } from './client-certificate-expiries.js';
import { ClientCertificates } from './client-certificates.service.js';
import { ClientTlsStore } from './client-tls-store.js';
import { PartnerDirectory } from './partner-directory.js';
import { PartnerProfile } from './partner-profile.js';
import { PartnerRepository } from './partner.repository.js';
import { PartnerSigningController } from './partner-signing.controller.js';
import { PartnerSigning } from './partner-signing.service.js';
import { PartnersController } from './partners.controller.js';
import { PartnersService } from './partners.service.js';
import { PartnerPortalLinksController, PortalAdminController } from './portal-links.controller.js';
import { PortalLinkRepository } from './portal-link.repository.js';
import { PortalLinks } from './portal-links.js';
import { PortalPruning } from './portal-pruning.js';
import { PortalSessionRepository } from './portal-session.repository.js';
import { PortalSessions } from './portal-sessions.js';
import { DEFAULT_PARTNER_RATE_LIMIT, PARTNER_RATE_LIMIT, RateLimiter } from './rate-limiter.js';
import { SealedSecretRepository } from './sealed-secret.repository.js';
import { SecretsReencryption } from './secrets-reencryption.js';

/** Partner accounts: API keys, signing keys, client certificates, rotation, the portal's links and sessions. */
@Module({})
export class PartnersModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(PartnersModule, config, {
      imports: [PlatformModule.forRoot(config), OperatorsModule.forRoot(config), EgressModule.forRoot(config)],
      controllers: {
        api: [
          PartnersController,
          PartnerSigningController,
          PartnerPortalLinksController,
          PortalAdminController,
          ClientCertificateController,
        ],
      },
      providers: {
        // Every role: a process whose SECRETS_KEY cannot open a stored secret stops at start.
        any: [
          SecretsReencryption,
          ClientCertificateExpiries,
          PortalPruning,
          PartnerRepository,
          ClientCertificateRepository,
          PortalLinkRepository,
          PortalSessionRepository,
          SealedSecretRepository,
        ],
        api: [
          PartnersService,
          PartnerSigning,
          PartnerProfile,
          PartnerDirectory,
          PortalLinks,
          PortalSessions,
          ClientCertificates,
          RateLimiter,
          { provide: PARTNER_RATE_LIMIT, useValue: DEFAULT_PARTNER_RATE_LIMIT },
        ],
        worker: [ClientTlsStore],
      },
      exports: [
        ClientCertificateExpiries,
        PortalPruning,
        PartnersService,
        PartnerProfile,
        PartnerDirectory,
        PartnerSigning,
        PortalLinks,
        PortalSessions,
        RateLimiter,
        ClientTlsStore,
      ],
    });
  }
}
