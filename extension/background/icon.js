// The toolbar icon: our artwork (icons/icon-*.png) redrawn per tab on an OffscreenCanvas.
//   green    the probe says this page has memory: coloured pixels hue-shifted to green, whites kept
//   off      the site is off (or page memory is off): greyed, faded
//   neutral  the artwork as drawn

/** @typedef {'green' | 'off' | 'neutral'} Look */

const GREEN_HUE = 140; // degrees
const BRAND_HUE = 229; // #4058d6, the artwork's colour

/** @param {number} r @param {number} g @param {number} b */
function rgbToHsl(r, g, b) {
  r /= 255; g /= 255; b /= 255;
  const max = Math.max(r, g, b), min = Math.min(r, g, b);
  const l = (max + min) / 2;
  if (max === min) return [0, 0, l];
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  let h;
  if (max === r) h = (g - b) / d + (g < b ? 6 : 0);
  else if (max === g) h = (b - r) / d + 2;
  else h = (r - g) / d + 4;
  return [h * 60, s, l];
}

/** @param {number} h @param {number} s @param {number} l */
function hslToRgb(h, s, l) {
  const k = (/** @type {number} */ n) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (/** @type {number} */ n) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

/**
 * Recolour RGBA pixels in place (pure: testable without a canvas).
 * @param {Uint8ClampedArray} px
 * @param {Look} look
 */
export function recolour(px, look) {
  if (look === 'neutral') return px;
  for (let i = 0; i < px.length; i += 4) {
    const [h, s, l] = rgbToHsl(px[i], px[i + 1], px[i + 2]);
    if (look === 'green') {
      if (s < 0.15) continue; // whites and greys stay as they are
      const [r, g, b] = hslToRgb((h + GREEN_HUE - BRAND_HUE + 360) % 360, Math.min(1, s * 0.8), Math.max(0, l * 0.85));
      px[i] = r; px[i + 1] = g; px[i + 2] = b;
    } else {
      const grey = Math.round(150 + 0.35 * (l * 255 - 128));
      px[i] = px[i + 1] = px[i + 2] = s < 0.15 ? 245 : grey;
      px[i + 3] = Math.round(px[i + 3] * 0.6);
    }
  }
  return px;
}

const SIZES = [16, 32];

/** @param {number} size */
async function artwork(size) {
  const resp = await fetch(chrome.runtime.getURL(`icons/icon-${size}.png`));
  return createImageBitmap(await resp.blob());
}

/**
 * Draw the icon of one tab.
 * @param {number} tabId
 * @param {Look} look
 * @param {string} [title]
 */
export async function setTabIcon(tabId, look, title) {
  try {
    /** @type {Record<string, ImageData>} */
    const imageData = {};
    for (const size of SIZES) {
      const canvas = new OffscreenCanvas(size, size);
      const ctx = /** @type {OffscreenCanvasRenderingContext2D} */ (canvas.getContext('2d'));
      ctx.drawImage(await artwork(size), 0, 0, size, size);
      const img = ctx.getImageData(0, 0, size, size);
      recolour(img.data, look);
      imageData[String(size)] = img;
    }
    await chrome.action.setIcon({ tabId, imageData });
    if (title) await chrome.action.setTitle({ tabId, title });
  } catch (err) {
    // the tab may be gone already
  }
}
