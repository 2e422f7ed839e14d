// SPDX-License-Identifier: MIT
// The browser viewer's updates, read: one binary WebSocket message from
// the hub (made in encode.c) in, its operations out, in the order the
// page applies them. wire.h documents the format byte by byte; this is its
// one reader, shared by the page (embed.py inlines this file into
// page.html at build time), the tests and the bench. Pure: bytes in, plain
// objects out, nothing of the DOM; every length is checked against the
// message, so a short or unknown operation ends the reading with an error
// that says where, after the operations before it.

export const WIRE_OP = Object.freeze({
  COPY: 1, PNG: 2, JPEG: 3, FILL: 4, POINTER: 5, POINTER_MOVED: 6, INDEXED: 7,
});

// Bytes before an operation's payload: its kind and four 16-bit numbers
// (a rectangle: x, y, width, height); POINTER_MOVED is only kind, x, y.
const RECT_HEAD = 9;
const MOVED_SIZE = 5;
const INDEX_DEPTHS = [1, 2, 4, 8];
const SHORT = 'runs past the end of the message';

// decodeUpdate(bytes) -> { ops, error }. bytes: an ArrayBuffer or a view of
// one (a Node Buffer, a Uint8Array). Each op has kind ('copy', 'png',
// 'jpeg', 'fill', 'pointer', 'pointer-moved', 'indexed') and:
//   copy: srcX, srcY, width, height, then x, y (where it goes)
//   png, jpeg: x, y, width, height, data (the image file's bytes)
//   fill: x, y, width, height, rgb ([red, green, blue])
//   pointer: x, y (signed), width, height, rgba (width * height * 4; alpha
//     0 or 255); width 0: no pointer
//   pointer-moved: x, y (signed)
//   indexed: x, y, width, height, depth (bits per index), palette (RGB
//     triples), zlib (the packed indices, deflated: see indexedPixels)
// Payloads are views into bytes, not copies. error is null, or says which
// operation at which byte could not be read.
export function decodeUpdate(bytes) {
  const u8 = bytes instanceof ArrayBuffer
    ? new Uint8Array(bytes)
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const ops = [];
  for (let at = 0; at < u8.length;) {
    const read = readOperation(u8, view, at);
    if (typeof read === 'string') return { ops, error: `operation ${u8[at]} at byte ${at} of ${u8.length}: ${read}` };
    ops.push(read.op);
    at = read.end;
  }
  return { ops, error: null };
}

// The operation at byte at: { op, end } (where the next one starts), or
// why it cannot be read.
function readOperation(u8, view, at) {
  const kind = u8[at];
  const fits = (end) => end <= u8.length;
  if (kind === WIRE_OP.POINTER_MOVED) {
    if (!fits(at + MOVED_SIZE)) return SHORT;
    return { op: { kind: 'pointer-moved', x: view.getInt16(at + 1), y: view.getInt16(at + 3) }, end: at + MOVED_SIZE };
  }
  if (!(kind >= WIRE_OP.COPY && kind <= WIRE_OP.INDEXED)) return 'no such operation';
  const p = at + RECT_HEAD; // the payload
  if (!fits(p)) return SHORT;
  const n = (i) => view.getUint16(at + 1 + i * 2);
  const rect = { x: n(0), y: n(1), width: n(2), height: n(3) };
  if (kind === WIRE_OP.COPY) {
    if (!fits(p + 4)) return SHORT;
    return { op: { kind: 'copy', srcX: rect.x, srcY: rect.y, width: rect.width, height: rect.height,
      x: view.getUint16(p), y: view.getUint16(p + 2) }, end: p + 4 };
  }
  if (kind === WIRE_OP.PNG || kind === WIRE_OP.JPEG) {
    if (!fits(p + 4) || !fits(p + 4 + view.getUint32(p))) return SHORT;
    const end = p + 4 + view.getUint32(p);
    return { op: { kind: kind === WIRE_OP.PNG ? 'png' : 'jpeg', ...rect, data: u8.subarray(p + 4, end) }, end };
  }
  if (kind === WIRE_OP.FILL) {
    if (!fits(p + 3)) return SHORT;
    return { op: { kind: 'fill', ...rect, rgb: [u8[p], u8[p + 1], u8[p + 2]] }, end: p + 3 };
  }
  if (kind === WIRE_OP.POINTER) {
    const end = p + rect.width * rect.height * 4;
    if (!fits(end)) return SHORT;
    return { op: { kind: 'pointer', ...rect, x: view.getInt16(at + 1), y: view.getInt16(at + 3),
      rgba: u8.subarray(p, end) }, end };
  }
  // INDEXED: depth, colours - 1, the palette, the zlib data's length, it.
  if (!fits(p + 2)) return SHORT;
  const depth = u8[p], palette = p + 2, length = palette + (u8[p + 1] + 1) * 3;
  if (!INDEX_DEPTHS.includes(depth)) return `depth ${depth} is not one of ${INDEX_DEPTHS.join(', ')}`;
  if (!fits(length + 4) || !fits(length + 4 + view.getUint32(length))) return SHORT;
  const end = length + 4 + view.getUint32(length);
  return { op: { kind: 'indexed', ...rect, depth, palette: u8.subarray(palette, length),
    zlib: u8.subarray(length + 4, end) }, end };
}

// An indexed operation's pixels: packed, the inflated zlib data (each row
// starts on a byte, indices of depth bits from the most significant bit,
// as a PNG packs them) in, RGBA (alpha 255) out. An index past the
// palette reads as black, bytes past the data as index 0.
export function indexedPixels(width, height, depth, palette, packed) {
  const rowBytes = Math.ceil(width * depth / 8), mask = (1 << depth) - 1;
  const out = new Uint8ClampedArray(width * height * 4);
  for (let y = 0, o = 0; y < height; y++) {
    const row = y * rowBytes;
    for (let x = 0; x < width; x++, o += 4) {
      const bit = x * depth;
      const index = ((packed[row + (bit >> 3)] >> (8 - depth - (bit & 7))) & mask) * 3;
      out[o] = palette[index];
      out[o + 1] = palette[index + 1];
      out[o + 2] = palette[index + 2];
      out[o + 3] = 255;
    }
  }
  return out;
}
