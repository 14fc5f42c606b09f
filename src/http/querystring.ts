// Query strings: every value a string. A repeated list key (symbols=A&symbols=B) is joined with
// commas so it means the same as symbols=A,B; other repeated keys keep their first value.
const LIST_KEYS = new Set(['symbols', 'universes', 'ids']);

export function parseQueryString(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    if (!(key in out)) out[key] = value;
    else if (LIST_KEYS.has(key)) out[key] = `${out[key]},${value}`;
  }
  return out;
}
