// Reading the PNGs of /graph the way a viewer would: the size from the IHDR chunk, the pixels
// decoded by @napi-rs/canvas, counted by colour inside a rectangle.
import { createCanvas, loadImage } from '@napi-rs/canvas';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the IHDR chunk; throws when the bytes are not a PNG. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || !png.subarray(0, 8).equals(SIGNATURE) || png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

export type Rgb = [number, number, number];

/** Parses `#rrggbb`. */
export function rgb(hex: string): Rgb {
  return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];
}

/** Pixels of the rectangle within `tolerance` (per channel) of the colour. */
export async function countColor(png: Buffer, area: { x: number; y: number; w: number; h: number }, color: Rgb, tolerance = 40): Promise<number> {
  const img = await loadImage(png);
  const canvas = createCanvas(img.width, img.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(area.x, area.y, area.w, area.h).data;
  let n = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (Math.abs(data[i]! - color[0]) <= tolerance && Math.abs(data[i + 1]! - color[1]) <= tolerance && Math.abs(data[i + 2]! - color[2]) <= tolerance) n++;
  }
  return n;
}
