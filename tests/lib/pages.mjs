// SPDX-License-Identifier: MIT
// Pages for the desktop's browser, served by a test host of the test's own
// (testhost.mjs): a local session has a network of its own without the
// host's loopback and reaches the test host through slirp4netns.
import { startTestHost, testHostUnavailable } from './testhost.mjs';

// Pages can report back with POST /report (JSON), collected in reports.
// Where no test host can be made, url is null and unavailable says why,
// for the tests that need pages to skip with.
export async function startPageServer(pages) {
  const unavailable = testHostUnavailable();
  if (unavailable) return { url: null, unavailable, reports: [], close: async () => {} };
  const host = await startTestHost();
  let server;
  try {
    server = await host.serve('page', { pages });
  } catch (e) {
    await host.close();
    throw e;
  }
  return {
    url: `http://${host.address}:${server.port}`,
    get reports() {
      return server.events.filter((e) => 'report' in e).map((e) => e.report);
    },
    close: () => host.close(),
  };
}

// For a test that needs startPageServer's pages: true (and the test marked
// SKIP, with the reason) where there are none.
export function skipWithoutPages(t, server) {
  if (!server.unavailable) return false;
  t.skip(`no test host to serve pages: ${server.unavailable}`);
  return true;
}
