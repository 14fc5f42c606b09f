// The vendor fault matrix (matrix.ts) for eastmoney: one file per vendor so the three run in parallel.
import { vendorMatrix } from './matrix.ts';
import { EASTMONEY } from './vendors.ts';

vendorMatrix(EASTMONEY);
