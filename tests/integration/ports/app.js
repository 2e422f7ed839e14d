// SPDX-License-Identifier: MIT
// Loaded as a subresource of index.html through the port proxy.
window.appLoaded = true;
