// The partner portal's one script (served from /portal/portal.js: the CSP runs no inline script).
// A page waiting for a result (a test callback, a redelivery, a replay, a test event) marks the
// region that shows it with data-refresh="<seconds>": this asks for the page again after that
// long and puts the new region in place of the old, until the new one is no longer marked (the
// result settled). Only that region changes, so nothing typed elsewhere is lost; it is a polite
// live region, read out when its content changes. Without this script, its Refresh link does it.
'use strict';
(function () {
  var region = document.querySelector('[data-refresh]');
  if (!region || !region.id || !window.fetch || !window.DOMParser) return;

  function later(seconds) {
    window.setTimeout(ask, Math.max(1, Number(seconds) || 5) * 1000);
  }

  function ask() {
    window
      .fetch(window.location.href, { credentials: 'same-origin', headers: { accept: 'text/html' }, cache: 'no-store' })
      .then(function (res) {
        // Too many requests: ask again after the delay the page was given. Anything else (signed out, gone): stop.
        if (res.status === 429) return later(res.headers.get('retry-after'));
        if (!res.ok) return;
        return res.text().then(function (html) {
          var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById(region.id);
          if (!fresh) return;
          if (fresh.innerHTML !== region.innerHTML) {
            region.replaceChildren.apply(
              region,
              Array.prototype.map.call(fresh.childNodes, function (n) {
                return document.importNode(n, true);
              }),
            );
          }
          var wait = fresh.getAttribute('data-refresh');
          if (wait === null) return region.removeAttribute('data-refresh');
          region.setAttribute('data-refresh', wait);
          later(wait);
        });
      })
      .catch(function () {
        // The network failed: the region stays as it is, with its Refresh link.
      });
  }

  later(region.getAttribute('data-refresh'));
})();
