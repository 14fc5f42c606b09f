// The effective config for printing: secrets (API keys, passwords, tokens, credentials inside URLs)
// masked, so `check-config` output can be pasted into a ticket.
const SECRET_NAME = /(api_?key|password|passwd|secret|token)$/i;
const URL_CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/[^/@\s]*?:)[^/@\s]+@/i;
const URL_USER_ONLY = /^([a-z][a-z0-9+.-]*:\/\/)[^/:@\s]+@/i;

export function maskSecrets(value: unknown, name = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, name));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, maskSecrets(child, key)]));
  }
  if (typeof value !== 'string' || value === '') return value;
  if (SECRET_NAME.test(name)) return '***';
  // redis://:pass@host, postgres://user:pass@host, and a bare token as the user part (redis://token@host)
  if (URL_CREDENTIALS.test(value)) return value.replace(URL_CREDENTIALS, '$1***@');
  if (URL_USER_ONLY.test(value) && /^redis/i.test(value)) return value.replace(URL_USER_ONLY, '$1***@');
  return value;
}
