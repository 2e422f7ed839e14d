#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs lizard-bridge as an MCP stdio server on its own
# local desktop (Xvnc + openbox, 1280x800). Extra arguments go to the bridge,
# e.g. scripts/run.sh --size 1920x1080 or scripts/run.sh --vnc vnc://host:5901;
# scripts/run.sh serve [...] runs the daemon instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d build ] || meson setup build --buildtype=release >&2
ninja -C build >&2
case "${1:-}" in
serve | stdio | call) exec build/lizard-bridge "$@" ;;
*) exec build/lizard-bridge stdio "$@" ;;
esac
