// Draws one graph to PNG with @napi-rs/canvas; runs in the render thread (workers/graph-render.ts),
// never on the primary's event loop. Layout: title on top, value axis with unit-labelled ticks
// and its caption on the left, time axis below the plot, legend at the bottom. A step with no
// measurement is a gap; a lone measured step between gaps is drawn as a dot.
import { createCanvas, GlobalFonts, type SKRSContext2D } from '@napi-rs/canvas';
import { formatValue, timeTicks, UNIT_CAPTION, valueAxis } from './axis.js';
import type { Unit } from './lines.js';
import type { GraphTypeName } from './types.js';

interface DrawLine {
  label: string;
  color: string;
  values: Float64Array;
}

export interface DrawJob {
  width: number;
  height: number;
  type: GraphTypeName;
  title: string;
  unit: Unit;
  /** Start of the first step and the step, seconds. */
  start: number;
  step: number;
  lines: DrawLine[];
  peak?: DrawLine;
}

/** The line colours: Main green, Sub blue, then the further lines of the detail graphs; Peak pink. */
export const LINE_COLORS = ['#00a000', '#0040ff', '#ff8000', '#c00000', '#8040c0'] as const;
export const PEAK_COLOR = '#ff60c0';
const BACKGROUND = '#ffffff';
const PLOT_BACKGROUND = '#f6f6f6';
const GRID = '#d8d8d8';
const TEXT = '#202020';
const FONT_FILES = ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'];
const FAMILY = 'DejaVu Sans';

let fontsReady = false;
function ensureFonts(): void {
  if (fontsReady) return;
  for (const f of FONT_FILES) {
    if (GlobalFonts.registerFromPath(f, FAMILY) === null) throw new Error(`font ${f} cannot be loaded: install the Debian package fonts-dejavu-core`);
  }
  fontsReady = true;
}

/**
 * Where the plot sits in the picture, for a size (the dash graph is smaller in every way) and
 * the rows its legend takes.
 */
export function plotArea(width: number, height: number, legendRows = 1): { x: number; y: number; w: number; h: number; font: number } {
  const small = width < 300;
  const font = small ? 8 : 10;
  const left = small ? 36 : 66;
  const top = small ? 16 : 20;
  const bottom = (small ? 34 : 38) + (legendRows - 1) * (small ? 9 : 12);
  return { x: left, y: top, w: width - left - (small ? 6 : 12), h: height - top - bottom, font };
}

function fitText(ctx: SKRSContext2D, text: string, max: number): string {
  if (ctx.measureText(text).width <= max) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(`${s}…`).width > max) s = s.slice(0, -1);
  return `${s}…`;
}

function drawSeries(ctx: SKRSContext2D, values: Float64Array, xOf: (k: number) => number, yOf: (v: number) => number, color: string, width: number): void {
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = width;
  ctx.beginPath();
  let open = false;
  for (let k = 0; k < values.length; k++) {
    const v = values[k]!;
    if (Number.isNaN(v)) { open = false; continue; }
    const x = xOf(k), y = yOf(v);
    const alone = !open && (k + 1 >= values.length || Number.isNaN(values[k + 1]!));
    // A step between gaps (often the newest, at the right edge) would be a line of no length.
    if (alone) ctx.fillRect(x - 2 * width, y - 1.5 * width, 2 * width + 1, 3 * width);
    if (open) ctx.lineTo(x, y); else ctx.moveTo(x, y);
    open = true;
  }
  ctx.stroke();
}

interface Legend {
  entries: DrawLine[];
  texts: string[];
  font: number;
  /** Indices of the entries on each row. */
  rows: number[][];
}

/**
 * A colour box and the label of each line, with its largest value when that fits. When the
 * labels do not fit one row the font shrinks, then they wrap onto a second row: no entry is
 * ever left out.
 */
function planLegend(ctx: SKRSContext2D, job: DrawJob, room: number, font: number): Legend {
  const entries = [...job.lines, ...(job.peak ? [job.peak] : [])];
  const small = job.width < 300;
  const labels = entries.map((l) => l.label);
  const withMax = entries.map((l) => {
    let top = -Infinity;
    for (const v of l.values) if (!Number.isNaN(v) && v > top) top = v;
    return top === -Infinity ? l.label : `${l.label} (max ${formatValue(top, job.unit)})`;
  });
  const wrap = (texts: string[], f: number): number[][] => {
    ctx.font = `${f}px "${FAMILY}"`;
    const rows: number[][] = [[]];
    let used = 0;
    texts.forEach((t, i) => {
      const w = ctx.measureText(t).width + f + 8;
      if (used + w > room && rows.at(-1)!.length > 0) { rows.push([]); used = 0; }
      rows.at(-1)!.push(i);
      used += w;
    });
    return rows;
  };
  if (!small && wrap(withMax, font).length === 1) return { entries, texts: withMax, font, rows: wrap(withMax, font) };
  for (let f = font; f >= 7; f--) {
    const rows = wrap(labels, f);
    if (rows.length === 1) return { entries, texts: labels, font: f, rows };
  }
  return { entries, texts: labels, font: 7, rows: wrap(labels, 7) };
}

function drawLegend(ctx: SKRSContext2D, legend: Legend, x0: number, bottom: number, small: boolean): void {
  const f = legend.font;
  ctx.font = `${f}px "${FAMILY}"`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const rowHeight = small ? 9 : 12;
  legend.rows.forEach((row, r) => {
    const y = bottom - (legend.rows.length - 1 - r) * rowHeight;
    let x = x0;
    for (const i of row) {
      ctx.fillStyle = legend.entries[i]!.color;
      ctx.fillRect(x, y - f / 2 + 1, f - 2, f - 2);
      ctx.fillStyle = TEXT;
      ctx.fillText(legend.texts[i]!, x + f + 1, y);
      x += ctx.measureText(legend.texts[i]!).width + f + 8;
    }
  });
}

type Area = ReturnType<typeof plotArea>;

/** Where a step (`xOf`), a time (`xOfT`) and a value (`yOf`) are drawn in the plot. */
interface Scale { span: number; xOf(k: number): number; xOfT(t: number): number; yOf(v: number): number }

export function drawGraph(job: DrawJob): Buffer {
  ensureFonts();
  const canvas = createCanvas(job.width, job.height);
  const ctx = canvas.getContext('2d');
  const small = job.width < 300;
  const base = plotArea(job.width, job.height);
  const legendX = small ? 4 : base.x;
  const legend = planLegend(ctx, job, job.width - legendX - 4, base.font);
  const area = plotArea(job.width, job.height, legend.rows.length);
  ctx.fillStyle = BACKGROUND;
  ctx.fillRect(0, 0, job.width, job.height);

  ctx.fillStyle = TEXT;
  ctx.font = `bold ${area.font + 1}px "${FAMILY}"`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  ctx.fillText(fitText(ctx, job.title, job.width - 8), job.width / 2, 3);

  const all = [...job.lines.map((l) => l.values), ...(job.peak ? [job.peak.values] : [])];
  let min = Infinity, max = -Infinity;
  for (const a of all) for (const v of a) if (!Number.isNaN(v)) { if (v < min) min = v; if (v > max) max = v; }
  const axis = valueAxis(min, max, 5, job.unit === 'B');
  const n = job.lines[0]?.values.length ?? 0;
  const span = n * job.step;
  const scale: Scale = {
    span,
    xOfT: (t) => area.x + ((t - job.start) / span) * area.w,
    xOf: (k) => area.x + ((k + 0.5) / n) * area.w,
    yOf: (v) => area.y + area.h - ((v - axis.lo) / (axis.hi - axis.lo)) * area.h,
  };
  drawAxes(ctx, job, area, scale, axis.ticks);
  drawPlot(ctx, job, area, scale, max === -Infinity);
  drawLegend(ctx, legend, legendX, job.height - (small ? 7 : 9), small);
  return canvas.encodeSync('png');
}

/** The plot's background, the value ticks with their grid lines, the time ticks, the unit caption. */
function drawAxes(ctx: SKRSContext2D, job: DrawJob, area: Area, scale: Scale, valueTicks: number[]): void {
  const small = job.width < 300;
  ctx.fillStyle = PLOT_BACKGROUND;
  ctx.fillRect(area.x, area.y, area.w, area.h);
  ctx.strokeStyle = GRID;
  ctx.lineWidth = 1;
  ctx.font = `${area.font}px "${FAMILY}"`;
  ctx.fillStyle = TEXT;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const v of valueTicks) {
    const y = Math.round(scale.yOf(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(area.x, y); ctx.lineTo(area.x + area.w, y); ctx.stroke();
    ctx.fillText(formatValue(v, job.unit, small), area.x - 3, y);
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const tick of timeTicks(job.type, job.start, job.start + scale.span)) {
    const x = Math.round(scale.xOfT(tick.t)) + 0.5;
    ctx.beginPath(); ctx.moveTo(x, area.y); ctx.lineTo(x, area.y + area.h + (tick.label === '' ? 2 : 4)); ctx.stroke();
    // A label that would leave the picture is left out (its tick stays).
    const half = ctx.measureText(tick.label).width / 2;
    if (tick.label !== '' && x - half >= 0 && x + half <= job.width) ctx.fillText(tick.label, x, area.y + area.h + 5);
  }
  // The caption of the value axis, turned along it.
  ctx.save();
  ctx.translate(small ? 5 : 9, area.y + area.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText(UNIT_CAPTION[job.unit], 0, 0);
  ctx.restore();
}

/** The lines (Peak under the others, Main on top) clipped to the plot, or `no data yet`; its frame. */
function drawPlot(ctx: SKRSContext2D, job: DrawJob, area: Area, scale: Scale, empty: boolean): void {
  ctx.save();
  ctx.beginPath();
  ctx.rect(area.x, area.y, area.w, area.h);
  ctx.clip();
  const lw = job.width < 300 ? 1 : 1.5;
  if (job.peak) drawSeries(ctx, job.peak.values, scale.xOf, scale.yOf, job.peak.color, lw);
  for (let i = job.lines.length - 1; i >= 0; i--) drawSeries(ctx, job.lines[i]!.values, scale.xOf, scale.yOf, job.lines[i]!.color, lw);
  ctx.restore();
  if (empty) {
    ctx.fillStyle = '#909090';
    ctx.textBaseline = 'middle';
    ctx.fillText('no data yet', area.x + area.w / 2, area.y + area.h / 2);
  }
  ctx.strokeStyle = '#808080';
  ctx.strokeRect(area.x + 0.5, area.y + 0.5, area.w - 1, area.h - 1);
}
