// SPDX-License-Identifier: MIT
// The ws package's WebSocket client, for scripts outside tests/ (bench/,
// scripts/): packages resolve from the importing file, and this one lives
// where tests/node_modules is found.
export { default as WebSocket } from 'ws';
