// Fastify's compilers as this service uses them: validators compiled on a route's first request,
// and JSON.stringify as the serializer (data routes send finished bytes).
import { createRequire } from 'node:module';

type ValidatorFactory = (externalSchemas: unknown, ajvOptions: unknown) => (route: { schema: unknown }) => ValidateFn;
type ValidateFn = ((data: unknown) => boolean) & { errors?: unknown };
const requireCjs = createRequire(import.meta.url);

/**
 * Fastify's own validator compiler (@fastify/ajv-compiler, same options), compiling each route's
 * schema on its first request instead of at boot: ~100 ms of CPU in a ~0.9 s start went to
 * compiling validators for routes a process may never serve (BENCHMARKS.md, startup). Fastify reads a failed
 * validation's `errors` from the function it was given, so the wrapper carries them over.
 */
export function lazyValidators(externalSchemas: unknown, ajvOptions: unknown): (route: { schema: unknown }) => ValidateFn {
  // Ajv itself (its module, its instance, the shared schemas checked against the meta-schema) also
  // waits for the first request that validates anything.
  let build: ((route: { schema: unknown }) => ValidateFn) | undefined;
  return (route) => {
    let compiled: ValidateFn | undefined;
    const validate: ValidateFn = (data) => {
      build ??= (requireCjs('@fastify/ajv-compiler') as () => ValidatorFactory)()(externalSchemas, ajvOptions);
      compiled ??= build(route);
      const ok = compiled(data);
      validate.errors = compiled.errors;
      return ok;
    };
    return validate;
  };
}

/**
 * Response serialisation is JSON.stringify, as Fastify's serializer factory. Response schemas
 * document the API (OpenAPI); data routes send finished bytes, so a fast-json-stringify serialiser
 * per route and status (a fifth of startup when compiled at boot) buys nothing, and Fastify's own
 * factory (@fastify/fast-json-stringify-compiler with its Ajv, ~25 ms to load) is never needed.
 */
export function jsonSerializers(): (route: { schema: unknown }) => (data: unknown) => string {
  return () => (data) => JSON.stringify(data);
}

