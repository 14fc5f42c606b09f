// The vendor fault matrix (matrix.ts) for tickflow: one file per vendor so the three run in parallel.
import { vendorMatrix } from './matrix.ts';
import { TICKFLOW } from './vendors.ts';

vendorMatrix(TICKFLOW);
