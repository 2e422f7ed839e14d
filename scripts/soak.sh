#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Soak run (not part of test.sh; minutes long): CYCLES (default 200)
# create/kill cycles of local sessions on `lizard-bridge serve`, each with
# a viewer connected and calls in flight, every DESKTOP_EVERY-th (default
# 10) a full desktop, the rest bare. Passes when descriptors, threads and
# child processes come back to where they started and RSS grows < 5 MB.
# Prints the numbers. Uses build/lizard-bridge, or $LIZARD_BRIDGE_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x "${LIZARD_BRIDGE_BIN:-build/lizard-bridge}" ] || ninja -C build >&2
export LIZARD_BRIDGE_BIN="${LIZARD_BRIDGE_BIN:-$PWD/build/lizard-bridge}"
exec node scripts/soak.mjs "${1:-200}" "${2:-10}"
