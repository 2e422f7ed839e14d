// SPDX-License-Identifier: MIT
// Pictures as the tests compare them: a screenshot's PNG decoded (pngjs,
// RGBA), one pixel of it, packed RGB as the X server's own capture gives
// it, and how many pixels of two such pictures differ.
import { PNG } from 'pngjs';

export function decodePng(base64) {
  return PNG.sync.read(Buffer.from(base64, 'base64'));
}

// The RGB of one pixel of a decoded PNG.
export function pixelAt(png, x, y) {
  const i = (y * png.width + x) * 4;
  return [png.data[i], png.data[i + 1], png.data[i + 2]];
}

// RGBA (pngjs) to packed RGB, for comparison with captureRootRgb.
export function rgbaToRgb(png) {
  const out = Buffer.alloc(png.width * png.height * 3);
  for (let i = 0, o = 0; i < png.data.length; i += 4, o += 3) {
    out[o] = png.data[i];
    out[o + 1] = png.data[i + 1];
    out[o + 2] = png.data[i + 2];
  }
  return out;
}

export function countDifferentPixels(a, b) {
  let differing = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i += 3) {
    if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) differing++;
  }
  return differing + Math.abs(a.length - b.length) / 3;
}
