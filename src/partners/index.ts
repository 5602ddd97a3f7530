// partners/: partner accounts, API keys, signing keys, client certificates, the portal's links and sessions.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { ClientCertificateExpiries } from './client-certificate-expiries.js';
export type { CertificateExpiry } from './client-certificate-expiries.js';
export { ClientTlsStore } from './client-tls-store.js';
export { CurrentPartner } from './current-partner.js';
export { PartnerDirectory } from './partner-directory.js';
export type { PartnerPageQuery, PartnerRecord } from './partner-directory.js';
export { PartnerProfile } from './partner-profile.js';
export { PartnerResponse } from './partner-profile.responses.js';
export { PartnerSigning } from './partner-signing.service.js';
export { Partner } from './partner.entity.js';
export { PartnersService } from './partners.service.js';
export { PortalLinks } from './portal-links.js';
export { PortalPruning } from './portal-pruning.js';
export type { LinkRefusal } from './portal-links.js';
export { PORTAL_MAX_HOURS, PortalSessions } from './portal-sessions.js';
export { RateLimiter } from './rate-limiter.js';
export { PartnersModule } from './partners.module.js';
