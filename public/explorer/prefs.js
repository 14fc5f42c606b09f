// The user's up/down colour setting, the only thing this page keeps in localStorage (the key never
// goes there: api.js keeps it in sessionStorage). "auto" follows the market's own convention:
// CN and HK read red as up and green as down, US the reverse.
import { regionOf } from './format.js';

const COLOURS_STORAGE = 'mdqs.explorer.colours';
export const COLOUR_MODES = ['auto', 'red-up', 'green-up'];

export const RED = '#e5383b';
export const GREEN = '#1a9e6f';

/** The stored mode; anything unreadable (storage off, an old value) is "auto". */
export function loadColourMode() {
  try {
    const stored = localStorage.getItem(COLOURS_STORAGE);
    return COLOUR_MODES.includes(stored) ? stored : 'auto';
  } catch {
    return 'auto';
  }
}

export function saveColourMode(mode) {
  try {
    if (mode === 'auto') localStorage.removeItem(COLOURS_STORAGE);
    else localStorage.setItem(COLOURS_STORAGE, mode);
  } catch {
    // Storage refused (private mode, quota): the setting holds for this page only.
  }
}

/** {scheme: 'red-up'|'green-up', up, down} for a mode and the symbol on screen. */
export function resolveColours(mode, symbol) {
  const region = symbol ? regionOf(symbol) : 'CN';
  const scheme = mode === 'auto' ? (region === 'US' ? 'green-up' : 'red-up') : mode;
  return scheme === 'red-up' ? { scheme, up: RED, down: GREEN } : { scheme, up: GREEN, down: RED };
}
