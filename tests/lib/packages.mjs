// SPDX-License-Identifier: MIT
// A Debian package a test builds inside a session and installs as root.
export const PACKAGE = `lizard-probe-${process.pid}`;

// Builds a package inside with dpkg-deb (from the host's /usr, seen
// inside) and installs it as root: a program in /usr/bin, an entry in
// dpkg's database, and a directory its postinst gives to the man user, as
// man-db's trigger does (a sandbox whose namespace maps one id fails it).
export const BUILD_AND_INSTALL = buildAndInstall('chown man:man');

// The same with what the postinst does to its directory: `chown ...`, or
// a command that needs no other user (a daemon whose sandboxes map one id).
export function buildAndInstall(postinstCommand) {
  return `set -e
mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/usr/bin
printf 'Package: ${PACKAGE}\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: test <t@example.org>\\nDescription: probe\\n' > /tmp/pkg/DEBIAN/control
printf '#!/bin/sh\\necho installed-inside\\n' > /tmp/pkg/usr/bin/${PACKAGE}
chmod 755 /tmp/pkg/usr/bin/${PACKAGE}
printf '#!/bin/sh\\nset -e\\nmkdir -p /var/cache/${PACKAGE}\\n${postinstCommand} /var/cache/${PACKAGE}\\n' > /tmp/pkg/DEBIAN/postinst
chmod 755 /tmp/pkg/DEBIAN/postinst
dpkg-deb --build /tmp/pkg /tmp/probe.deb >/dev/null
dpkg -i /tmp/probe.deb >/dev/null
${PACKAGE}
dpkg-query -W -f '\${Status}\\n' ${PACKAGE}`;
}
