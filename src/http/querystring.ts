// Query strings: every value a string. A repeated list key (symbols=A&symbols=B) is joined with
// commas so it means the same as symbols=A,B; other repeated keys keep their first value.
const LIST_KEYS = new Set(['symbols', 'universes', 'ids']);

/**
 * Integer parameters of the public routes. AJV's coerceTypes reads them with Number(), which takes
 * `0x10`, `0b101`, `1e3`, ` 17 `, `+5` and `1.0` (issue 14.9). Only decimal digits with an optional
 * leading minus, inside the safe-integer range, pass here; anything else is replaced by
 * NOT_AN_INTEGER, which AJV cannot coerce, so validation answers INVALID_COUNT (count) or
 * INVALID_PARAMETER (the others) exactly as for `count=abc`. A route that adds an integer query
 * parameter adds its name here.
 */
export const INTEGER_KEYS = new Set(['count', 'start_time', 'end_time', 'cursor']);

/** What a non-decimal value of an integer parameter becomes (never a number to Number()). */
export const NOT_AN_INTEGER = 'not-a-decimal-integer';

const DECIMAL = /^-?[0-9]+$/;

/** Whether `text` is a decimal integer (optional leading minus) that a double holds exactly. */
export function isDecimalInteger(text: string): boolean {
  return DECIMAL.test(text) && Number.isSafeInteger(Number(text));
}

export function parseQueryString(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    if (!(key in out)) out[key] = INTEGER_KEYS.has(key) && !isDecimalInteger(value) ? NOT_AN_INTEGER : value;
    else if (LIST_KEYS.has(key)) out[key] = `${out[key]},${value}`;
  }
  return out;
}
