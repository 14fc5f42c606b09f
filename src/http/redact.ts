// Keys never reach a log line: every query parameter whose DECODED name is a credential is masked
// wherever a URL is logged. Names are decoded exactly as the query-string parser decodes them
// (URLSearchParams), so `%61pi_key`, `api_k%65y`, `api%5Fkey` and `API_KEY` are all caught however
// they are spelled; the raw name is kept in the output so the log shows what the client sent.
const SECRET_NAMES = new Set(['apikey', 'xapikey', 'token', 'accesstoken', 'password', 'secret']);

/** Whether a decoded parameter name names a credential (case, `_`/`-` and spaces ignored). */
export function isSecretParam(decodedName: string): boolean {
  return SECRET_NAMES.has(decodedName.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

function decodeName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  for (const [name] of new URLSearchParams(`${raw}=`)) return name;
  return raw;
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1);
  let changed = false;
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    if (!isSecretParam(decodeName(rawName))) return part;
    changed = true;
    return `${rawName}=[redacted]`;
  });
  return changed ? `${url.slice(0, q + 1)}${parts.join('&')}` : url;
}
