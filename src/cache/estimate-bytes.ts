// A cheap upper-ish estimate of a value's heap bytes, so the data cache can be bounded by bytes.
// Numbers 8 (plus array slot), strings 2 per char + header, objects a header per key.
export function estimateBytes(value: unknown, depth = 0): number {
  if (value === null || value === undefined) return 8;
  switch (typeof value) {
    case 'number':
    case 'boolean':
      return 8;
    case 'string':
      return 16 + 2 * value.length;
    case 'object':
      break;
    default:
      return 16;
  }
  if (depth > 6) return 64;
  if (Array.isArray(value)) {
    const n = value.length;
    if (n > 0 && typeof value[0] === 'number') return 32 + 16 * n;
    let sum = 32 + 8 * n;
    for (const item of value) sum += estimateBytes(item, depth + 1);
    return sum;
  }
  if (value instanceof Map) {
    let sum = 64;
    for (const [k, v] of value) sum += estimateBytes(k, depth + 1) + estimateBytes(v, depth + 1) + 16;
    return sum;
  }
  let sum = 32;
  for (const key in value as Record<string, unknown>) {
    sum += 16 + 2 * key.length + estimateBytes((value as Record<string, unknown>)[key], depth + 1);
  }
  return sum;
}
