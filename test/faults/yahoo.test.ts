// The vendor fault matrix (matrix.ts) for yahoo: one file per vendor so the three run in parallel.
import { vendorMatrix } from './matrix.ts';
import { YAHOO } from './vendors.ts';

vendorMatrix(YAHOO);
