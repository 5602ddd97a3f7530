// portal/: the partner portal's pages.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { PORTAL_COOKIE, PORTAL_HEADERS, mountPortal, signInPage } from './portal-mount.js';
export { PortalModule } from './portal.module.js';
