// Pool (universe) membership: one pool per call, reference TTL. Any valid key may read it.
import type { PoolDetail as PoolDetailValue, PoolId, Region } from '../../domain.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';
import { estimateBytes } from '../../cache/estimate-bytes.ts';
import { PoolDetail } from '../../schemas.ts';
import { invoke, type ResourceDescriptor } from './descriptor.ts';
import { REFERENCE_DEFAULTS, referenceFromConfig } from './reference.ts';
import { referenceTtl } from './shared.ts';

const ttl = referenceTtl('pools');

export const pools: ResourceDescriptor<'pools', { id: PoolId; region: Region }, PoolDetailValue, CacheWindows, never> = {
  name: 'pools',
  features: [],
  method: 'listPool',
  schema: PoolDetail,
  policy: { defaults: REFERENCE_DEFAULTS, fromConfig: referenceFromConfig },
  ttl,
  spec: ({ policy }) => ({
    resource: 'pools',
    key: (q) => q.id,
    region: (q) => q.region,
    batch: false,
    fetch: async (adapter, [q], ctx) => {
      const pool = await invoke<PoolDetailValue | undefined>(adapter, 'listPool', q.id, ctx);
      return pool === undefined ? new Map() : new Map([[q.id, pool]]);
    },
    windows: (value) => ttl({ notFound: value === undefined }, policy),
    size: (value) => estimateBytes(value),
  }),
};
