// portal/: the partner portal's pages.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { cookieValues, portalCookie } from './portal-cookie.js';
export { portalHeadersFor, SCRIPTLESS_PAGE_HEADERS } from './portal-headers.js';
export { refusalPage } from './portal-views.js';
export { PortalModule } from './portal.module.js';
