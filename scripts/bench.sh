#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds (release) and runs the benchmarks: lizard-bridge against
# scrot, scrot + ImageMagick, xdotool and fixed sleeps on one 1280x800 local
# desktop showing a page in Chromium. Prints Markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
[ -d build-release ] || meson setup build-release --buildtype=release >/dev/null
ninja -C build-release >&2
echo "== capture alone (no MCP), build-release/bench/capture-micro"
build-release/bench/capture-micro 50
echo "== computer use, end to end over MCP stdio"
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/computer-use.mjs
echo "== browser viewers"
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/viewer.mjs 10
echo "== the sandbox: exec, session start with and without it, files"
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/sandbox.mjs 10
echo "== the code interpreter: run_code against jupyter_client"
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/code.mjs 200
echo "== sizes: pause/resume latency and idle desktop memory (cgroups)"
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/resources.mjs 20
echo "== a service in a sandbox: expose_port against slirp4netns's add_hostfwd"
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/ports.mjs 3
echo "== writable roots, snapshots and restores"
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/images.mjs 10
LIZARD_BRIDGE_BIN="$PWD/build-release/lizard-bridge" node bench/ordinary-root.mjs 10
