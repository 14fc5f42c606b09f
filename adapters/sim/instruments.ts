// The bundled universe of the simulated market (docs/vendors.md#the-simulated-market, `sim`): real, well-known
// instruments with their real codes, listed names and listing dates. Share counts, lot sizes and
// yields are approximate real figures; `price` is only the anchor the simulation walks from, so
// every served price is simulated. Listing dates of pre-1980 US names are the best-known year of
// their first exchange listing and may be off by days.
//
// Rows are positional to keep ~190 instruments readable one per line; `build` turns each table
// into full objects once, at import.

import type { Exchange, InstrumentType, PoolId, Region } from '../../src/domain.ts';

export type DividendPolicy = 'none' | 'annual' | 'semiannual' | 'quarterly';

export interface SimInstrument {
  /** Normalised: '600519.SH', '00700.HK', 'BRK.B.US'. */
  symbol: string;
  code: string;
  exchange: Exchange;
  region: Region;
  name: string;
  type: InstrumentType;
  pool: PoolId;
  /** YYYY-MM-DD, exchange-local. */
  listingDate: string;
  totalShares: number;
  floatShares: number;
  lotSize: number;
  /** Price level the simulation anchors to, in the trading currency. */
  price: number;
  /** Annualised volatility of the simulated walk. */
  volatility: number;
  dividend: DividendPolicy;
  /** Fraction of price paid per year; 0 when `dividend` is 'none'. */
  dividendYield: number;
  /** Known for 送转 (bonus/capitalisation issues), so the simulation emits them. */
  bonusShares: boolean;
  /** Has a real split history, so the simulation emits splits. */
  splits: boolean;
  /** Under special treatment: ±5% daily limit on the A-share board. */
  st?: boolean;
  /**
   * Indices only: the average price of a constituent share traded, in the trading currency, at the
   * anchor level. An index's volume counts constituent shares, so its amount is volume × this
   * (scaled with the index level), not volume × the index level.
   */
  shareValue?: number;
}

/**
 * code, name, listingDate, totalShares, floatShares, lotSize, price, volatility, dividend,
 * dividendYield, flags ('B' bonus shares, 'S' splits, 'T' special treatment, 'E' an ETF listed
 * among stocks).
 */
type Row = readonly [string, string, string, number, number, number, number, number, DividendPolicy, number, string?];

const REGION_OF: Record<Exchange, Region> = { SH: 'CN', SZ: 'CN', BJ: 'CN', HK: 'HK', US: 'US', SHF: 'CN', DCE: 'CN', ZCE: 'CN', CFX: 'CN', INE: 'CN', GFE: 'CN' };

function build(rows: readonly Row[], exchange: Exchange, pool: PoolId, type: InstrumentType): SimInstrument[] {
  return rows.map(([code, name, listingDate, totalShares, floatShares, lotSize, price, volatility, dividend, dividendYield, flags = '']) => {
    const instrument: SimInstrument = {
      symbol: `${code}.${exchange}`, code, exchange, region: REGION_OF[exchange], name,
      type: flags.includes('E') ? 'etf' : type, pool, listingDate, totalShares, floatShares, lotSize,
      price, volatility, dividend, dividendYield,
      bonusShares: flags.includes('B'), splits: flags.includes('S'),
    };
    if (flags.includes('T')) instrument.st = true;
    return Object.freeze(instrument);
  });
}

// Shanghai: main board (600/601/603/605) and STAR (688, 200-share lots).
const SH_STOCKS: readonly Row[] = [
  ['600519', '贵州茅台', '2001-08-27', 1.2562e9, 1.2562e9, 100, 1450, 0.24, 'semiannual', 0.036, 'B'],
  ['601318', '中国平安', '2007-03-01', 1.821e10, 1.083e10, 100, 58, 0.28, 'semiannual', 0.045],
  ['600036', '招商银行', '2002-04-09', 2.522e10, 2.063e10, 100, 43, 0.22, 'annual', 0.048],
  ['601398', '工商银行', '2006-10-27', 3.564e11, 2.696e11, 100, 7.6, 0.18, 'semiannual', 0.042],
  ['601288', '农业银行', '2010-07-15', 3.4998e11, 3.19e11, 100, 6.8, 0.18, 'semiannual', 0.04],
  ['601988', '中国银行', '2006-07-05', 2.944e11, 2.108e11, 100, 5.6, 0.18, 'semiannual', 0.042],
  ['601939', '建设银行', '2007-09-25', 2.5e11, 9.59e9, 100, 9.2, 0.2, 'semiannual', 0.043],
  ['600900', '长江电力', '2003-11-18', 2.4468e10, 2.4468e10, 100, 29, 0.16, 'annual', 0.034],
  ['601857', '中国石油', '2007-11-05', 1.8302e11, 1.6192e11, 100, 8.8, 0.22, 'semiannual', 0.05],
  ['600028', '中国石化', '2001-08-08', 1.213e11, 9.56e10, 100, 6, 0.2, 'semiannual', 0.05],
  ['601088', '中国神华', '2007-10-09', 1.987e10, 1.6491e10, 100, 40, 0.22, 'annual', 0.058],
  ['600276', '恒瑞医药', '2000-10-18', 6.38e9, 6.38e9, 100, 62, 0.3, 'annual', 0.004, 'B'],
  ['600030', '中信证券', '2003-01-06', 1.482e10, 1.22e10, 100, 29, 0.3, 'semiannual', 0.018],
  ['601012', '隆基绿能', '2012-04-11', 7.578e9, 7.578e9, 100, 20, 0.45, 'none', 0],
  ['600809', '山西汾酒', '1994-01-06', 1.22e9, 1.22e9, 100, 200, 0.32, 'annual', 0.03],
  ['601899', '紫金矿业', '2008-04-25', 2.658e10, 2.05e10, 100, 26, 0.32, 'semiannual', 0.02],
  ['600887', '伊利股份', '1996-03-12', 6.33e9, 6.33e9, 100, 28, 0.22, 'annual', 0.045],
  ['601166', '兴业银行', '2007-02-05', 2.077e10, 2.077e10, 100, 22, 0.2, 'annual', 0.05],
  ['600000', '浦发银行', '1999-11-10', 3.335e10, 3.335e10, 100, 12, 0.2, 'annual', 0.03],
  ['601628', '中国人寿', '2007-01-09', 2.8265e10, 2.082e10, 100, 42, 0.3, 'annual', 0.015],
  ['600309', '万华化学', '2001-01-05', 3.14e9, 3.14e9, 100, 70, 0.3, 'annual', 0.022],
  ['601633', '长城汽车', '2011-09-28', 8.557e9, 6.1e9, 100, 26, 0.38, 'annual', 0.015],
  ['600104', '上汽集团', '1997-11-25', 1.158e10, 1.158e10, 100, 17, 0.25, 'annual', 0.03],
  ['601888', '中国中免', '2009-10-15', 2.069e9, 1.952e9, 100, 75, 0.38, 'annual', 0.015],
  ['600585', '海螺水泥', '2002-02-07', 5.299e9, 3.9977e9, 100, 24, 0.25, 'annual', 0.04],
  ['600031', '三一重工', '2003-07-03', 8.47e9, 8.47e9, 100, 21, 0.32, 'annual', 0.015, 'B'],
  ['601668', '中国建筑', '2009-07-29', 4.13e10, 4.13e10, 100, 5.6, 0.22, 'annual', 0.05],
  ['601127', '赛力斯', '2016-06-15', 1.633e9, 1.51e9, 100, 140, 0.5, 'annual', 0.005],
  ['603259', '药明康德', '2018-05-08', 2.89e9, 2.59e9, 100, 90, 0.4, 'annual', 0.015, 'B'],
  ['603288', '海天味业', '2014-02-11', 5.85e9, 5.56e9, 100, 40, 0.28, 'annual', 0.025, 'B'],
  ['603986', '兆易创新', '2016-08-18', 6.7e8, 6.7e8, 100, 160, 0.5, 'annual', 0.002],
  ['605499', '东鹏饮料', '2021-05-27', 5.2e8, 5.2e8, 100, 280, 0.32, 'annual', 0.025],
  ['605117', '德业股份', '2021-04-20', 9.07e8, 9.07e8, 100, 70, 0.45, 'annual', 0.02],
  ['603501', '豪威集团', '2017-05-04', 1.21e9, 1.2e9, 100, 130, 0.42, 'annual', 0.002],
  ['600050', '中国联通', '2002-10-09', 3.18e10, 3.0e10, 100, 5.8, 0.25, 'annual', 0.02],
  ['601728', '中国电信', '2021-08-20', 9.151e10, 8.0e10, 100, 7, 0.25, 'semiannual', 0.04],
  ['600941', '中国移动', '2022-01-05', 2.16e10, 9.6e8, 100, 105, 0.2, 'semiannual', 0.048],
  ['601138', '工业富联', '2018-06-08', 1.986e10, 1.986e10, 100, 45, 0.5, 'annual', 0.015],
  ['688981', '中芯国际', '2020-07-16', 7.99e9, 1.97e9, 200, 110, 0.5, 'none', 0],
  ['688111', '金山办公', '2019-11-18', 4.63e8, 4.63e8, 200, 300, 0.45, 'annual', 0.003],
  ['688041', '海光信息', '2022-08-12', 2.324e9, 2.324e9, 200, 220, 0.55, 'annual', 0.001],
  ['688256', '寒武纪', '2020-07-20', 4.19e8, 4.19e8, 200, 1300, 0.65, 'none', 0],
  ['688012', '中微公司', '2019-07-22', 6.26e8, 6.26e8, 200, 260, 0.5, 'annual', 0.001],
  ['688599', '天合光能', '2020-06-10', 2.18e9, 2.18e9, 200, 20, 0.5, 'annual', 0.005],
  ['688036', '传音控股', '2019-09-30', 1.14e9, 1.14e9, 200, 80, 0.45, 'annual', 0.03],
  ['688271', '联影医疗', '2022-08-22', 8.24e8, 8.24e8, 200, 140, 0.4, 'annual', 0.002],
];

// Shenzhen: main board (000/001/002) and ChiNext (300/301), plus three ST names.
const SZ_STOCKS: readonly Row[] = [
  ['000001', '平安银行', '1991-04-03', 1.9406e10, 1.9406e10, 100, 12, 0.22, 'semiannual', 0.055, 'B'],
  ['000002', '万科A', '1991-01-29', 1.193e10, 9.72e9, 100, 6.5, 0.45, 'none', 0],
  ['000858', '五粮液', '1998-04-27', 3.882e9, 3.882e9, 100, 125, 0.28, 'semiannual', 0.045],
  ['000333', '美的集团', '2013-09-18', 7.68e9, 6.89e9, 100, 76, 0.26, 'semiannual', 0.05],
  ['000651', '格力电器', '1996-11-18', 5.6e9, 5.52e9, 100, 42, 0.25, 'semiannual', 0.07],
  ['002594', '比亚迪', '2011-06-30', 9.12e9, 3.48e9, 100, 105, 0.4, 'annual', 0.012, 'B'],
  ['002415', '海康威视', '2010-05-28', 9.23e9, 9.2e9, 100, 30, 0.3, 'semiannual', 0.03],
  ['000568', '泸州老窖', '1994-05-09', 1.472e9, 1.472e9, 100, 140, 0.32, 'semiannual', 0.04],
  ['002475', '立讯精密', '2010-09-15', 7.26e9, 7.26e9, 100, 55, 0.4, 'annual', 0.005],
  ['000725', '京东方A', '2001-01-12', 3.74e10, 3.6e10, 100, 4.4, 0.3, 'annual', 0.01],
  ['002714', '牧原股份', '2014-01-28', 5.46e9, 5.46e9, 100, 48, 0.35, 'semiannual', 0.03],
  ['000063', '中兴通讯', '1997-11-18', 4.78e9, 4.0e9, 100, 38, 0.45, 'annual', 0.016],
  ['002352', '顺丰控股', '2010-02-05', 4.99e9, 4.99e9, 100, 40, 0.28, 'annual', 0.03],
  ['001979', '招商蛇口', '2015-12-30', 9.06e9, 9.06e9, 100, 10, 0.35, 'annual', 0.02],
  ['000538', '云南白药', '1993-12-15', 1.78e9, 1.78e9, 100, 56, 0.2, 'semiannual', 0.04],
  ['001289', '龙源电力', '2022-01-24', 8.36e9, 5.04e9, 100, 17, 0.3, 'annual', 0.015],
  ['002304', '洋河股份', '2009-11-06', 1.506e9, 1.506e9, 100, 70, 0.3, 'semiannual', 0.05],
  ['000100', 'TCL科技', '2004-01-30', 1.878e10, 1.878e10, 100, 4.6, 0.35, 'annual', 0.01],
  ['002230', '科大讯飞', '2008-05-12', 2.31e9, 2.31e9, 100, 50, 0.5, 'annual', 0.002],
  ['000776', '广发证券', '1997-06-11', 7.6e9, 5.9e9, 100, 20, 0.32, 'annual', 0.03],
  ['000656', '*ST金科', '1996-11-28', 5.34e9, 5.34e9, 100, 1.8, 0.6, 'none', 0, 'T'],
  ['002602', 'ST华通', '2011-07-28', 7.45e9, 7.4e9, 100, 6, 0.5, 'none', 0, 'T'],
  ['002052', 'ST同洲', '2006-06-27', 7.46e8, 7.4e8, 100, 4, 0.6, 'none', 0, 'T'],
  ['300750', '宁德时代', '2018-06-11', 4.56e9, 4.23e9, 100, 380, 0.4, 'semiannual', 0.015, 'B'],
  ['300059', '东方财富', '2010-03-19', 1.58e10, 1.35e10, 100, 25, 0.45, 'annual', 0.004, 'B'],
  ['300760', '迈瑞医疗', '2018-10-16', 1.212e9, 1.212e9, 100, 220, 0.3, 'semiannual', 0.03],
  ['300274', '阳光电源', '2011-11-02', 2.07e9, 1.7e9, 100, 150, 0.55, 'annual', 0.005, 'B'],
  ['300015', '爱尔眼科', '2009-10-30', 9.33e9, 8.1e9, 100, 12, 0.4, 'annual', 0.01],
  ['300308', '中际旭创', '2012-04-10', 1.11e9, 1.1e9, 100, 400, 0.65, 'annual', 0.002],
  ['300124', '汇川技术', '2010-09-28', 2.69e9, 2.3e9, 100, 70, 0.4, 'annual', 0.006],
  ['300502', '新易盛', '2016-03-03', 9.9e8, 8.0e8, 100, 300, 0.65, 'annual', 0.001],
  ['301269', '华大九天', '2022-07-29', 5.43e8, 2.5e8, 100, 120, 0.55, 'annual', 0.001],
  ['300498', '温氏股份', '2015-11-02', 6.65e9, 6.3e9, 100, 17, 0.35, 'annual', 0.03],
  ['300014', '亿纬锂能', '2009-10-30', 2.05e9, 1.9e9, 100, 60, 0.5, 'annual', 0.005],
  ['300033', '同花顺', '2009-12-25', 5.376e8, 2.6e8, 100, 300, 0.6, 'annual', 0.01],
];

// Beijing: pre-2025 code forms (43/83), as most tools still write them.
const BJ_STOCKS: readonly Row[] = [
  ['430047', '诺思兰德', '2021-11-15', 2.75e8, 1.9e8, 100, 16, 0.6, 'none', 0],
  ['835185', '贝特瑞', '2021-11-15', 1.13e9, 6.9e8, 100, 30, 0.5, 'annual', 0.01],
  ['832982', '锦波生物', '2023-07-20', 1.15e8, 5.0e7, 100, 250, 0.6, 'annual', 0.01],
  ['830799', '艾融软件', '2021-11-15', 2.1e8, 1.4e8, 100, 40, 0.65, 'annual', 0.005],
  ['839493', '并行科技', '2023-11-16', 5.97e7, 2.5e7, 100, 120, 0.7, 'none', 0],
  // The 920 code form of 2025 on, as the TickFlow client's README writes this one; figures approximate.
  ['920662', '方盛股份', '2023-12-28', 1.2e8, 6.0e7, 100, 20, 0.6, 'none', 0],
];

// ETF share counts are fund units outstanding; every unit floats.
const SH_ETFS: readonly Row[] = [
  ['510050', '上证50ETF华夏', '2005-02-23', 2.0e10, 2.0e10, 100, 3.0, 0.18, 'annual', 0.02],
  ['510300', '沪深300ETF华泰柏瑞', '2012-05-28', 9.0e10, 9.0e10, 100, 4.6, 0.18, 'annual', 0.018],
  ['510500', '中证500ETF南方', '2013-03-15', 1.5e10, 1.5e10, 100, 7.0, 0.24, 'annual', 0.01],
  ['510330', '沪深300ETF华夏', '2012-12-25', 4.5e10, 4.5e10, 100, 4.7, 0.18, 'annual', 0.017],
  ['510310', '沪深300ETF易方达', '2013-03-25', 9.0e10, 9.0e10, 100, 2.2, 0.18, 'annual', 0.015],
  ['588000', '科创50ETF华夏', '2020-11-16', 6.0e10, 6.0e10, 100, 1.4, 0.35, 'none', 0],
  ['512880', '证券ETF国泰', '2016-08-08', 3.3e10, 3.3e10, 100, 1.3, 0.3, 'none', 0],
  ['512480', '半导体ETF国联安', '2019-06-12', 1.5e10, 1.5e10, 100, 1.3, 0.4, 'none', 0],
  ['513100', '纳指ETF国泰', '2013-05-15', 6.0e9, 6.0e9, 100, 2.0, 0.25, 'none', 0],
  ['513050', '中概互联网ETF易方达', '2017-01-18', 3.0e10, 3.0e10, 100, 1.6, 0.35, 'none', 0],
  ['518880', '黄金ETF华安', '2013-07-29', 7.0e9, 7.0e9, 100, 9.5, 0.16, 'none', 0],
  ['511880', '银华日利ETF', '2013-04-01', 6.0e8, 6.0e8, 100, 101, 0.005, 'annual', 0.014],
  ['512100', '中证1000ETF南方', '2016-11-04', 2.5e10, 2.5e10, 100, 2.8, 0.3, 'none', 0],
  ['512690', '酒ETF鹏华', '2019-05-06', 1.9e10, 1.9e10, 100, 0.6, 0.3, 'none', 0],
  ['512010', '医药ETF易方达', '2013-10-28', 1.0e10, 1.0e10, 100, 0.45, 0.3, 'none', 0],
  ['512660', '军工ETF国泰', '2016-08-08', 1.2e10, 1.2e10, 100, 1.1, 0.35, 'none', 0],
  ['513180', '恒生科技指数ETF华夏', '2021-05-25', 4.0e10, 4.0e10, 100, 0.75, 0.35, 'none', 0],
  ['513500', '标普500ETF博时', '2014-01-15', 5.0e9, 5.0e9, 100, 2.3, 0.18, 'none', 0],
  ['515790', '光伏ETF华泰柏瑞', '2020-12-18', 1.5e10, 1.5e10, 100, 0.9, 0.4, 'none', 0],
];

const SZ_ETFS: readonly Row[] = [
  ['159919', '沪深300ETF嘉实', '2012-05-28', 3.5e10, 3.5e10, 100, 4.7, 0.18, 'annual', 0.017],
  ['159915', '创业板ETF易方达', '2011-12-09', 4.0e10, 4.0e10, 100, 3.0, 0.32, 'none', 0],
  ['159949', '创业板50ETF华安', '2016-07-22', 1.5e10, 1.5e10, 100, 1.5, 0.35, 'none', 0],
  ['159995', '芯片ETF华夏', '2020-02-10', 1.5e10, 1.5e10, 100, 1.6, 0.4, 'none', 0],
  ['159920', '恒生ETF华夏', '2012-10-22', 1.0e10, 1.0e10, 100, 1.4, 0.22, 'none', 0],
  ['159941', '纳指ETF广发', '2015-07-13', 1.0e10, 1.0e10, 100, 1.3, 0.25, 'none', 0],
];

// Hong Kong: board lots differ per stock. H-share issuers: total is all classes, float the H shares.
const HK_STOCKS: readonly Row[] = [
  ['00700', '腾讯控股', '2004-06-16', 9.15e9, 9.15e9, 100, 620, 0.32, 'annual', 0.008, 'S'],
  ['09988', '阿里巴巴-W', '2019-11-26', 1.91e10, 1.91e10, 100, 150, 0.4, 'annual', 0.013],
  ['03690', '美团-W', '2018-09-20', 6.1e9, 5.5e9, 100, 110, 0.45, 'none', 0],
  ['00005', '汇丰控股', '1991-04-15', 1.75e10, 1.75e10, 400, 110, 0.22, 'quarterly', 0.05],
  ['00941', '中国移动', '1997-10-23', 2.16e10, 2.06e10, 500, 85, 0.18, 'semiannual', 0.065],
  ['01299', '友邦保险', '2010-10-29', 1.06e10, 1.06e10, 200, 75, 0.28, 'semiannual', 0.025],
  ['02318', '中国平安', '2004-06-24', 1.821e10, 7.45e9, 500, 55, 0.32, 'semiannual', 0.05],
  ['00388', '香港交易所', '2000-06-27', 1.268e9, 1.268e9, 100, 420, 0.3, 'semiannual', 0.025],
  ['01810', '小米集团-W', '2018-07-09', 2.6e10, 2.4e10, 200, 45, 0.45, 'none', 0],
  ['09618', '京东集团-SW', '2020-06-18', 3.0e9, 2.8e9, 50, 130, 0.4, 'annual', 0.02],
  ['00001', '长和', '2015-03-18', 3.83e9, 2.7e9, 500, 50, 0.22, 'semiannual', 0.06],
  ['00016', '新鸿基地产', '1972-08-23', 2.898e9, 1.8e9, 500, 95, 0.25, 'semiannual', 0.04],
  ['00883', '中国海洋石油', '2001-02-28', 4.75e10, 4.47e10, 1000, 20, 0.28, 'semiannual', 0.07],
  ['00939', '建设银行', '2005-10-27', 2.5e11, 2.4e11, 1000, 7.8, 0.2, 'semiannual', 0.065],
  ['01398', '工商银行', '2006-10-27', 3.564e11, 8.68e10, 1000, 6.2, 0.2, 'semiannual', 0.065],
  ['03988', '中国银行', '2006-06-01', 2.944e11, 8.36e10, 1000, 4.6, 0.2, 'semiannual', 0.065],
  ['02020', '安踏体育', '2007-07-10', 2.8e9, 1.3e9, 200, 90, 0.35, 'semiannual', 0.03],
  ['01211', '比亚迪股份', '2002-07-31', 9.12e9, 3.3e9, 500, 110, 0.42, 'annual', 0.012],
  ['09999', '网易-S', '2020-06-11', 3.2e9, 3.1e9, 100, 200, 0.35, 'quarterly', 0.02],
  ['00027', '银河娱乐', '1991-10-08', 4.37e9, 2.2e9, 1000, 38, 0.38, 'semiannual', 0.02],
  ['00011', '恒生银行', '1972-07-28', 1.87e9, 0.7e9, 100, 120, 0.22, 'quarterly', 0.05],
  ['02800', '盈富基金', '1999-11-12', 5.0e9, 5.0e9, 500, 26, 0.18, 'semiannual', 0.03, 'E'],
  ['03033', '南方恒生科技', '2020-08-28', 1.2e10, 1.2e10, 200, 5.6, 0.35, 'none', 0, 'E'],
  ['00857', '中国石油股份', '2000-04-07', 1.8302e11, 2.12e10, 2000, 7.5, 0.28, 'semiannual', 0.07],
  ['00386', '中国石油化工股份', '2000-10-19', 1.213e11, 2.48e10, 2000, 4.6, 0.26, 'semiannual', 0.07],
  ['00762', '中国联通', '2000-06-22', 3.06e10, 3.06e10, 2000, 9, 0.25, 'semiannual', 0.05],
  ['00981', '中芯国际', '2004-03-18', 7.99e9, 6.23e9, 500, 65, 0.55, 'none', 0],
  ['00992', '联想集团', '1994-02-14', 1.24e10, 1.24e10, 2000, 10, 0.38, 'semiannual', 0.04],
  ['01024', '快手-W', '2021-02-05', 4.3e9, 3.5e9, 100, 65, 0.45, 'none', 0],
  ['01088', '中国神华', '2005-06-15', 1.987e10, 3.4e9, 500, 34, 0.25, 'annual', 0.07],
  ['02269', '药明生物', '2017-06-13', 4.1e9, 4.1e9, 500, 28, 0.5, 'none', 0],
  ['02319', '蒙牛乳业', '2004-06-10', 3.92e9, 3.92e9, 1000, 16, 0.32, 'annual', 0.04],
  ['02331', '李宁', '2004-06-28', 2.58e9, 2.58e9, 500, 18, 0.45, 'semiannual', 0.04],
  ['02388', '中银香港', '2002-07-25', 1.057e10, 3.6e9, 500, 36, 0.2, 'semiannual', 0.06],
  ['02628', '中国人寿', '2003-12-18', 2.8265e10, 7.44e9, 1000, 22, 0.35, 'annual', 0.03],
  ['03968', '招商银行', '2006-09-22', 2.522e10, 4.59e9, 500, 50, 0.28, 'annual', 0.05],
  ['09633', '农夫山泉', '2020-09-08', 1.125e10, 4.0e9, 200, 45, 0.35, 'semiannual', 0.02],
  ['09868', '小鹏汽车-W', '2021-07-07', 1.9e9, 1.6e9, 100, 80, 0.6, 'none', 0],
  ['02015', '理想汽车-W', '2021-08-12', 2.13e9, 1.8e9, 100, 80, 0.55, 'none', 0],
  ['09888', '百度集团-SW', '2021-03-23', 2.76e9, 2.3e9, 50, 110, 0.4, 'none', 0],
  ['09961', '携程集团-S', '2021-04-19', 6.5e8, 6.0e8, 50, 550, 0.35, 'annual', 0.005],
  ['09626', '哔哩哔哩-W', '2021-03-29', 4.2e8, 3.5e8, 20, 200, 0.55, 'none', 0],
  ['00688', '中国海外发展', '1992-08-20', 1.0945e10, 4.9e9, 500, 13, 0.35, 'semiannual', 0.05],
  ['01109', '华润置地', '1996-11-08', 7.13e9, 2.9e9, 2000, 28, 0.35, 'semiannual', 0.05],
  ['06862', '海底捞', '2018-09-26', 5.57e9, 2.0e9, 1000, 14, 0.42, 'semiannual', 0.06],
  ['02313', '申洲国际', '2005-11-24', 1.503e9, 7.0e8, 100, 60, 0.35, 'semiannual', 0.04],
  ['06618', '京东健康', '2020-12-08', 3.2e9, 1.0e9, 50, 45, 0.45, 'none', 0],
  ['00020', '商汤-W', '2021-12-30', 3.6e10, 2.8e10, 1000, 2.1, 0.65, 'none', 0],
  ['01928', '金沙中国有限公司', '2009-11-30', 8.09e9, 2.4e9, 400, 18, 0.4, 'semiannual', 0.03],
  ['00066', '港铁公司', '2000-10-05', 6.22e9, 1.5e9, 500, 29, 0.2, 'semiannual', 0.045],
  ['02382', '舜宇光学科技', '2007-06-15', 1.097e9, 7.5e8, 100, 70, 0.45, 'annual', 0.01],
  ['01876', '百威亚太', '2019-09-30', 1.324e10, 1.7e9, 100, 8.5, 0.3, 'annual', 0.05],
  ['00285', '比亚迪电子', '2007-12-20', 2.253e9, 7.0e8, 500, 35, 0.5, 'annual', 0.015],
  ['03328', '交通银行', '2005-06-23', 8.84e10, 3.54e10, 1000, 6.8, 0.2, 'semiannual', 0.065],
  ['01772', '赣锋锂业', '2018-10-11', 2.017e9, 4.03e8, 200, 30, 0.6, 'annual', 0.01],
  ['09992', '泡泡玛特', '2020-12-11', 1.34e9, 6.5e8, 200, 250, 0.6, 'annual', 0.01],
  ['06690', '海尔智家', '2020-12-23', 9.38e9, 2.7e9, 200, 26, 0.3, 'annual', 0.05],
  ['01347', '华虹半导体', '2014-10-15', 1.72e9, 1.3e9, 1000, 60, 0.6, 'none', 0],
  ['02899', '紫金矿业', '2003-12-23', 2.658e10, 6.03e9, 2000, 25, 0.38, 'semiannual', 0.02],
];

// United States: lot 1. Foreign issuers' share counts are ADS-equivalents.
const US_STOCKS: readonly Row[] = [
  ['AAPL', 'Apple Inc.', '1980-12-12', 1.48e10, 1.48e10, 1, 270, 0.28, 'quarterly', 0.004, 'S'],
  ['MSFT', 'Microsoft Corporation', '1986-03-13', 7.43e9, 7.4e9, 1, 500, 0.25, 'quarterly', 0.007, 'S'],
  ['NVDA', 'NVIDIA Corporation', '1999-01-22', 2.43e10, 2.35e10, 1, 190, 0.5, 'quarterly', 0.0002, 'S'],
  ['AMZN', 'Amazon.com, Inc.', '1997-05-15', 1.07e10, 9.7e9, 1, 230, 0.32, 'none', 0, 'S'],
  ['GOOGL', 'Alphabet Inc. Class A', '2004-08-19', 5.8e9, 5.0e9, 1, 280, 0.3, 'quarterly', 0.003, 'S'],
  ['GOOG', 'Alphabet Inc. Class C', '2014-04-03', 5.45e9, 5.0e9, 1, 282, 0.3, 'quarterly', 0.003, 'S'],
  ['META', 'Meta Platforms, Inc.', '2012-05-18', 2.52e9, 2.17e9, 1, 700, 0.38, 'quarterly', 0.003],
  ['TSLA', 'Tesla, Inc.', '2010-06-29', 3.32e9, 2.9e9, 1, 420, 0.58, 'none', 0, 'S'],
  ['BRK.B', 'Berkshire Hathaway Inc. Class B', '1996-05-09', 1.38e9, 1.3e9, 1, 500, 0.17, 'none', 0, 'S'],
  ['JPM', 'JPMorgan Chase & Co.', '1969-03-05', 2.75e9, 2.73e9, 1, 310, 0.24, 'quarterly', 0.019, 'S'],
  ['V', 'Visa Inc.', '2008-03-19', 1.94e9, 1.7e9, 1, 350, 0.22, 'quarterly', 0.007, 'S'],
  ['MA', 'Mastercard Incorporated', '2006-05-25', 9.05e8, 8.2e8, 1, 570, 0.24, 'quarterly', 0.005, 'S'],
  ['JNJ', 'Johnson & Johnson', '1944-09-25', 2.41e9, 2.4e9, 1, 190, 0.17, 'quarterly', 0.027, 'S'],
  ['PG', 'The Procter & Gamble Company', '1891-01-02', 2.34e9, 2.33e9, 1, 155, 0.17, 'quarterly', 0.027, 'S'],
  ['KO', 'The Coca-Cola Company', '1919-09-05', 4.3e9, 4.27e9, 1, 70, 0.15, 'quarterly', 0.029, 'S'],
  ['PEP', 'PepsiCo, Inc.', '1965-06-08', 1.37e9, 1.37e9, 1, 150, 0.18, 'quarterly', 0.037, 'S'],
  ['XOM', 'Exxon Mobil Corporation', '1920-01-02', 4.3e9, 4.3e9, 1, 115, 0.22, 'quarterly', 0.035, 'S'],
  ['CVX', 'Chevron Corporation', '1921-06-24', 2.0e9, 2.0e9, 1, 155, 0.24, 'quarterly', 0.044, 'S'],
  ['WMT', 'Walmart Inc.', '1972-08-25', 7.98e9, 4.0e9, 1, 105, 0.2, 'quarterly', 0.009, 'S'],
  ['HD', 'The Home Depot, Inc.', '1981-09-22', 9.95e8, 9.94e8, 1, 390, 0.22, 'quarterly', 0.024, 'S'],
  ['DIS', 'The Walt Disney Company', '1957-11-12', 1.8e9, 1.8e9, 1, 115, 0.26, 'semiannual', 0.009, 'S'],
  ['NFLX', 'Netflix, Inc.', '2002-05-23', 4.23e9, 4.2e9, 1, 110, 0.4, 'none', 0, 'S'],
  ['INTC', 'Intel Corporation', '1971-10-13', 4.9e9, 4.4e9, 1, 38, 0.45, 'none', 0, 'S'],
  ['AMD', 'Advanced Micro Devices, Inc.', '1972-09-27', 1.62e9, 1.61e9, 1, 220, 0.5, 'none', 0, 'S'],
  ['ORCL', 'Oracle Corporation', '1986-03-12', 2.84e9, 1.65e9, 1, 220, 0.4, 'quarterly', 0.009, 'S'],
  ['CSCO', 'Cisco Systems, Inc.', '1990-02-16', 3.95e9, 3.94e9, 1, 75, 0.22, 'quarterly', 0.022, 'S'],
  ['IBM', 'International Business Machines Corporation', '1916-11-11', 9.35e8, 9.3e8, 1, 300, 0.24, 'quarterly', 0.022, 'S'],
  ['BAC', 'Bank of America Corporation', '1973-01-02', 7.4e9, 7.0e9, 1, 52, 0.26, 'quarterly', 0.021, 'S'],
  ['WFC', 'Wells Fargo & Company', '1972-06-01', 3.2e9, 3.2e9, 1, 85, 0.26, 'quarterly', 0.02, 'S'],
  ['T', 'AT&T Inc.', '1983-11-21', 7.15e9, 7.14e9, 1, 26, 0.2, 'quarterly', 0.043],
  ['VZ', 'Verizon Communications Inc.', '1983-11-21', 4.22e9, 4.21e9, 1, 41, 0.18, 'quarterly', 0.066],
  ['PFE', 'Pfizer Inc.', '1944-01-03', 5.69e9, 5.68e9, 1, 25, 0.22, 'quarterly', 0.068, 'S'],
  ['MRK', 'Merck & Co., Inc.', '1946-05-01', 2.5e9, 2.5e9, 1, 95, 0.22, 'quarterly', 0.034, 'S'],
  ['ABBV', 'AbbVie Inc.', '2013-01-02', 1.77e9, 1.76e9, 1, 220, 0.24, 'quarterly', 0.03],
  ['UNH', 'UnitedHealth Group Incorporated', '1984-10-17', 9.06e8, 9.0e8, 1, 340, 0.35, 'quarterly', 0.026, 'S'],
  ['COST', 'Costco Wholesale Corporation', '1985-12-05', 4.43e8, 4.42e8, 1, 920, 0.22, 'quarterly', 0.0055, 'S'],
  ['MCD', "McDonald's Corporation", '1965-04-21', 7.14e8, 7.13e8, 1, 300, 0.17, 'quarterly', 0.024, 'S'],
  ['NKE', 'NIKE, Inc.', '1980-12-02', 1.48e9, 1.18e9, 1, 65, 0.32, 'quarterly', 0.025, 'S'],
  ['BA', 'The Boeing Company', '1934-01-02', 7.6e8, 7.59e8, 1, 220, 0.32, 'none', 0, 'S'],
  ['CAT', 'Caterpillar Inc.', '1929-12-02', 4.68e8, 4.67e8, 1, 560, 0.28, 'quarterly', 0.011, 'S'],
  ['GS', 'The Goldman Sachs Group, Inc.', '1999-05-04', 3.05e8, 3.04e8, 1, 800, 0.28, 'quarterly', 0.018],
  ['BABA', 'Alibaba Group Holding Limited', '2014-09-19', 2.38e9, 2.38e9, 1, 155, 0.4, 'annual', 0.013],
  ['PDD', 'PDD Holdings Inc.', '2018-07-26', 1.42e9, 1.0e9, 1, 125, 0.45, 'none', 0],
  ['JD', 'JD.com, Inc.', '2014-05-22', 1.45e9, 1.3e9, 1, 33, 0.4, 'annual', 0.03],
  ['NIO', 'NIO Inc.', '2018-09-12', 2.3e9, 2.0e9, 1, 6.5, 0.65, 'none', 0],
  ['AVGO', 'Broadcom Inc.', '2009-08-06', 4.7e9, 4.6e9, 1, 350, 0.45, 'quarterly', 0.007, 'S'],
  ['ADBE', 'Adobe Inc.', '1986-08-13', 4.2e8, 4.19e8, 1, 350, 0.32, 'none', 0, 'S'],
  ['CRM', 'Salesforce, Inc.', '2004-06-23', 9.5e8, 9.3e8, 1, 250, 0.32, 'quarterly', 0.007, 'S'],
  ['QCOM', 'QUALCOMM Incorporated', '1991-12-13', 1.08e9, 1.08e9, 1, 165, 0.35, 'quarterly', 0.021, 'S'],
  ['TSM', 'Taiwan Semiconductor Manufacturing Company Limited', '1997-10-08', 5.19e9, 5.19e9, 1, 300, 0.35, 'quarterly', 0.01],
  ['UBER', 'Uber Technologies, Inc.', '2019-05-10', 2.08e9, 2.07e9, 1, 90, 0.38, 'none', 0],
  ['PLTR', 'Palantir Technologies Inc.', '2020-09-30', 2.37e9, 2.2e9, 1, 180, 0.65, 'none', 0],
  ['SPY', 'SPDR S&P 500 ETF Trust', '1993-01-29', 1.0e9, 1.0e9, 1, 680, 0.16, 'quarterly', 0.011, 'E'],
  ['QQQ', 'Invesco QQQ Trust, Series 1', '1999-03-10', 6.5e8, 6.5e8, 1, 610, 0.2, 'quarterly', 0.005, 'ES'],
];

/**
 * code, name, date first published, level at the anchor, volatility, typical daily volume (shares
 * of the constituents, as the exchanges and vendors count it), average traded share price.
 * Dates are each index's launch (older ones start at the simulation's history start); levels,
 * volumes and share prices are approximate real figures.
 */
type IndexRow = readonly [string, string, string, number, number, number, number];

const CN_INDICES: readonly (readonly [Exchange, ...IndexRow])[] = [
  ['SH', '000001', '上证指数', '1991-07-15', 3900, 0.18, 5.0e10, 12],
  ['SH', '000300', '沪深300', '2005-04-08', 4600, 0.2, 2.0e10, 17],
  ['SH', '000905', '中证500', '2007-01-15', 7200, 0.24, 1.5e10, 13],
  ['SH', '000852', '中证1000', '2014-10-17', 7400, 0.27, 2.0e10, 12],
  ['SH', '000016', '上证50', '2004-01-02', 3000, 0.18, 5.0e9, 20],
  ['SH', '000688', '科创50', '2020-07-23', 1400, 0.35, 1.5e9, 40],
  ['SZ', '399001', '深证成指', '1995-01-23', 13000, 0.22, 7.0e10, 14],
  ['SZ', '399006', '创业板指', '2010-06-01', 3000, 0.3, 1.0e10, 30],
  ['BJ', '899050', '北证50', '2022-11-21', 1400, 0.4, 6.0e8, 17],
];
const HK_INDICES: readonly (readonly [Exchange, ...IndexRow])[] = [
  ['HK', 'HSI', '恒生指数', '1969-11-24', 26000, 0.22, 3.0e9, 27],
  ['HK', 'HSCEI', '恒生中国企业指数', '1994-08-08', 9300, 0.25, 3.0e9, 17],
  ['HK', 'HSTECH', '恒生科技指数', '2020-07-27', 5800, 0.32, 2.0e9, 20],
];
const US_INDICES: readonly (readonly [Exchange, ...IndexRow])[] = [
  ['US', 'SPX', 'S&P 500', '1957-03-04', 6800, 0.16, 5.0e9, 150],
  ['US', 'NDX', 'Nasdaq-100', '1985-01-31', 25000, 0.2, 4.0e9, 200],
  ['US', 'DJI', 'Dow Jones Industrial Average', '1896-05-26', 47000, 0.15, 5.0e8, 300],
];

/** The walk trades 1% of `floatShares` on an ordinary day for indices (daily.ts). */
export const INDEX_TURNOVER = 0.01;

function buildIndices(rows: readonly (readonly [Exchange, ...IndexRow])[], pool: PoolId): SimInstrument[] {
  return rows.map(([exchange, code, name, listingDate, price, volatility, dailyVolume, shareValue]) => Object.freeze({
    symbol: `${code}.${exchange}`, code, exchange, region: REGION_OF[exchange], name, type: 'index', pool, listingDate,
    totalShares: dailyVolume / INDEX_TURNOVER, floatShares: dailyVolume / INDEX_TURNOVER, lotSize: exchange === 'HK' || exchange === 'US' ? 1 : 100,
    price, volatility, dividend: 'none', dividendYield: 0, bonusShares: false, splits: false, shareValue,
  } satisfies SimInstrument));
}

export const SIM_INSTRUMENTS: readonly SimInstrument[] = Object.freeze([
  ...build(SH_STOCKS, 'SH', 'CN_Stock', 'stock'),
  ...build(SZ_STOCKS, 'SZ', 'CN_Stock', 'stock'),
  ...build(BJ_STOCKS, 'BJ', 'CN_Stock', 'stock'),
  ...build(SH_ETFS, 'SH', 'CN_ETF', 'etf'),
  ...build(SZ_ETFS, 'SZ', 'CN_ETF', 'etf'),
  ...build(HK_STOCKS, 'HK', 'HK_Stock', 'stock'),
  ...build(US_STOCKS, 'US', 'US_Stock', 'stock'),
  ...buildIndices(CN_INDICES, 'CN_Index'),
  ...buildIndices(HK_INDICES, 'HK_Index'),
  ...buildIndices(US_INDICES, 'US_Index'),
]);

export const SIM_POOLS: readonly { id: PoolId; name: string; region: Region; category: string }[] = Object.freeze([
  { id: 'CN_Stock', name: 'A股', region: 'CN', category: 'equity' },
  { id: 'CN_ETF', name: '沪深ETF', region: 'CN', category: 'etf' },
  { id: 'HK_Stock', name: '港股', region: 'HK', category: 'equity' },
  { id: 'US_Stock', name: '美股', region: 'US', category: 'equity' },
  { id: 'CN_Index', name: 'A股指数', region: 'CN', category: 'index' },
  { id: 'HK_Index', name: '港股指数', region: 'HK', category: 'index' },
  { id: 'US_Index', name: '美股指数', region: 'US', category: 'index' },
]);

const BY_SYMBOL: ReadonlyMap<string, SimInstrument> = new Map(SIM_INSTRUMENTS.map((i) => [i.symbol, i]));

const BY_POOL: ReadonlyMap<PoolId, readonly SimInstrument[]> = new Map(
  SIM_POOLS.map((p) => [p.id, Object.freeze(SIM_INSTRUMENTS.filter((i) => i.pool === p.id))]),
);

/** Looks up a normalised symbol ('00700.HK', not '700.hk'); callers normalise first. */
export function findSimInstrument(symbol: string): SimInstrument | undefined {
  return BY_SYMBOL.get(symbol);
}

/** Members of a pool in list order; the same frozen array on every call. */
export function simPoolMembers(pool: PoolId): readonly SimInstrument[] {
  return BY_POOL.get(pool) ?? [];
}
