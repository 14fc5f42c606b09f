// Exchange closures and shortened days, as data. Only weekdays are listed: weekends are always
// closed (CN make-up working Saturdays/Sundays included), so listing them would add nothing.
// Sources: SSE/SZSE/BSE yearly closure notices, the HKSAR gazetted general holidays (HKEX closes
// on every weekday general holiday), and NYSE Group's holiday and early-closing announcements.
// HK weather closures (typhoon signal 8, black rainstorm; abolished from 2024-09-23) are
// unscheduled and not modelled.

import type { Region } from '../domain.ts';

export interface CalendarEntry {
  /** Exchange-local date, YYYY-MM-DD. */
  date: string;
  name: string;
}

export interface EarlyClose extends CalendarEntry {
  /** Exchange-local HH:MM at which the last regular session ends that day. */
  close: string;
}

/** Inclusive year range each table is complete for; outside it only weekends are closed. */
export const HOLIDAY_COVERAGE: Record<Region, { first: number; last: number }> = {
  CN: { first: 2023, last: 2027 },
  HK: { first: 2023, last: 2027 },
  US: { first: 2023, last: 2028 },
};

export const HOLIDAYS: Record<Region, readonly CalendarEntry[]> = {
  CN: [
    { date: '2023-01-02', name: "New Year's Day" },
    { date: '2023-01-23', name: 'Spring Festival' },
    { date: '2023-01-24', name: 'Spring Festival' },
    { date: '2023-01-25', name: 'Spring Festival' },
    { date: '2023-01-26', name: 'Spring Festival' },
    { date: '2023-01-27', name: 'Spring Festival' },
    { date: '2023-04-05', name: 'Qingming Festival' },
    { date: '2023-05-01', name: 'Labour Day' },
    { date: '2023-05-02', name: 'Labour Day' },
    { date: '2023-05-03', name: 'Labour Day' },
    { date: '2023-06-22', name: 'Dragon Boat Festival' },
    { date: '2023-06-23', name: 'Dragon Boat Festival' },
    { date: '2023-09-29', name: 'Mid-Autumn Festival' },
    { date: '2023-10-02', name: 'National Day' },
    { date: '2023-10-03', name: 'National Day' },
    { date: '2023-10-04', name: 'National Day' },
    { date: '2023-10-05', name: 'National Day' },
    { date: '2023-10-06', name: 'National Day' },

    { date: '2024-01-01', name: "New Year's Day" },
    { date: '2024-02-09', name: 'Spring Festival' },
    { date: '2024-02-12', name: 'Spring Festival' },
    { date: '2024-02-13', name: 'Spring Festival' },
    { date: '2024-02-14', name: 'Spring Festival' },
    { date: '2024-02-15', name: 'Spring Festival' },
    { date: '2024-02-16', name: 'Spring Festival' },
    { date: '2024-04-04', name: 'Qingming Festival' },
    { date: '2024-04-05', name: 'Qingming Festival' },
    { date: '2024-05-01', name: 'Labour Day' },
    { date: '2024-05-02', name: 'Labour Day' },
    { date: '2024-05-03', name: 'Labour Day' },
    { date: '2024-06-10', name: 'Dragon Boat Festival' },
    { date: '2024-09-16', name: 'Mid-Autumn Festival' },
    { date: '2024-09-17', name: 'Mid-Autumn Festival' },
    { date: '2024-10-01', name: 'National Day' },
    { date: '2024-10-02', name: 'National Day' },
    { date: '2024-10-03', name: 'National Day' },
    { date: '2024-10-04', name: 'National Day' },
    { date: '2024-10-07', name: 'National Day' },

    { date: '2025-01-01', name: "New Year's Day" },
    { date: '2025-01-28', name: 'Spring Festival' },
    { date: '2025-01-29', name: 'Spring Festival' },
    { date: '2025-01-30', name: 'Spring Festival' },
    { date: '2025-01-31', name: 'Spring Festival' },
    { date: '2025-02-03', name: 'Spring Festival' },
    { date: '2025-02-04', name: 'Spring Festival' },
    { date: '2025-04-04', name: 'Qingming Festival' },
    { date: '2025-05-01', name: 'Labour Day' },
    { date: '2025-05-02', name: 'Labour Day' },
    { date: '2025-05-05', name: 'Labour Day' },
    { date: '2025-06-02', name: 'Dragon Boat Festival' },
    { date: '2025-10-01', name: 'National Day' },
    { date: '2025-10-02', name: 'National Day' },
    { date: '2025-10-03', name: 'National Day' },
    { date: '2025-10-06', name: 'Mid-Autumn Festival' },
    { date: '2025-10-07', name: 'National Day' },
    { date: '2025-10-08', name: 'National Day' },

    { date: '2026-01-01', name: "New Year's Day" },
    { date: '2026-01-02', name: "New Year's Day" },
    { date: '2026-02-16', name: 'Spring Festival' },
    { date: '2026-02-17', name: 'Spring Festival' },
    { date: '2026-02-18', name: 'Spring Festival' },
    { date: '2026-02-19', name: 'Spring Festival' },
    { date: '2026-02-20', name: 'Spring Festival' },
    { date: '2026-02-23', name: 'Spring Festival' },
    { date: '2026-04-06', name: 'Qingming Festival' },
    { date: '2026-05-01', name: 'Labour Day' },
    { date: '2026-05-04', name: 'Labour Day' },
    { date: '2026-05-05', name: 'Labour Day' },
    { date: '2026-06-19', name: 'Dragon Boat Festival' },
    { date: '2026-09-25', name: 'Mid-Autumn Festival' },
    { date: '2026-10-01', name: 'National Day' },
    { date: '2026-10-02', name: 'National Day' },
    { date: '2026-10-05', name: 'National Day' },
    { date: '2026-10-06', name: 'National Day' },
    { date: '2026-10-07', name: 'National Day' },

    // 2027: statutory days (New Year 1, Spring Festival eve + 3, Qingming 1, Labour 2, Dragon
    // Boat 1, Mid-Autumn 1, National Day 3) with weekend substitutes and the usual 5/8-day blocks.
    { date: '2027-01-01', name: "New Year's Day" }, // derived, not yet published
    { date: '2027-02-05', name: 'Spring Festival' }, // derived, not yet published
    { date: '2027-02-08', name: 'Spring Festival' }, // derived, not yet published
    { date: '2027-02-09', name: 'Spring Festival' }, // derived, not yet published
    { date: '2027-02-10', name: 'Spring Festival' }, // derived, not yet published
    { date: '2027-02-11', name: 'Spring Festival' }, // derived, not yet published
    { date: '2027-02-12', name: 'Spring Festival' }, // derived, not yet published
    { date: '2027-04-05', name: 'Qingming Festival' }, // derived, not yet published
    { date: '2027-05-03', name: 'Labour Day' }, // derived, not yet published
    { date: '2027-05-04', name: 'Labour Day' }, // derived, not yet published
    { date: '2027-05-05', name: 'Labour Day' }, // derived, not yet published
    { date: '2027-06-09', name: 'Dragon Boat Festival' }, // derived, not yet published
    { date: '2027-09-15', name: 'Mid-Autumn Festival' }, // derived, not yet published
    { date: '2027-10-01', name: 'National Day' }, // derived, not yet published
    { date: '2027-10-04', name: 'National Day' }, // derived, not yet published
    { date: '2027-10-05', name: 'National Day' }, // derived, not yet published
    { date: '2027-10-06', name: 'National Day' }, // derived, not yet published
    { date: '2027-10-07', name: 'National Day' }, // derived, not yet published
  ],

  // A general holiday on a Sunday moves to the next weekday that is not itself a holiday; one on
  // a Saturday is not substituted (Lunar New Year: a Sunday among days 1-3 adds the 4th day).
  HK: [
    { date: '2023-01-02', name: "The day following New Year's Day" },
    { date: '2023-01-23', name: 'The second day of Lunar New Year' },
    { date: '2023-01-24', name: 'The third day of Lunar New Year' },
    { date: '2023-01-25', name: 'The fourth day of Lunar New Year' },
    { date: '2023-04-05', name: 'Ching Ming Festival' },
    { date: '2023-04-07', name: 'Good Friday' },
    { date: '2023-04-10', name: 'Easter Monday' },
    { date: '2023-05-01', name: 'Labour Day' },
    { date: '2023-05-26', name: "Buddha's Birthday" },
    { date: '2023-06-22', name: 'Tuen Ng Festival' },
    { date: '2023-10-02', name: 'The day following National Day' },
    { date: '2023-10-23', name: 'Chung Yeung Festival' },
    { date: '2023-12-25', name: 'Christmas Day' },
    { date: '2023-12-26', name: 'The first weekday after Christmas Day' },

    { date: '2024-01-01', name: "New Year's Day" },
    { date: '2024-02-12', name: 'The third day of Lunar New Year' },
    { date: '2024-02-13', name: 'The fourth day of Lunar New Year' },
    { date: '2024-03-29', name: 'Good Friday' },
    { date: '2024-04-01', name: 'Easter Monday' },
    { date: '2024-04-04', name: 'Ching Ming Festival' },
    { date: '2024-05-01', name: 'Labour Day' },
    { date: '2024-05-15', name: "Buddha's Birthday" },
    { date: '2024-06-10', name: 'Tuen Ng Festival' },
    { date: '2024-07-01', name: 'HKSAR Establishment Day' },
    { date: '2024-09-18', name: 'The day following Mid-Autumn Festival' },
    { date: '2024-10-01', name: 'National Day' },
    { date: '2024-10-11', name: 'Chung Yeung Festival' },
    { date: '2024-12-25', name: 'Christmas Day' },
    { date: '2024-12-26', name: 'The first weekday after Christmas Day' },

    { date: '2025-01-01', name: "New Year's Day" },
    { date: '2025-01-29', name: "Lunar New Year's Day" },
    { date: '2025-01-30', name: 'The second day of Lunar New Year' },
    { date: '2025-01-31', name: 'The third day of Lunar New Year' },
    { date: '2025-04-04', name: 'Ching Ming Festival' },
    { date: '2025-04-18', name: 'Good Friday' },
    { date: '2025-04-21', name: 'Easter Monday' },
    { date: '2025-05-01', name: 'Labour Day' },
    { date: '2025-05-05', name: "Buddha's Birthday" },
    { date: '2025-07-01', name: 'HKSAR Establishment Day' },
    { date: '2025-10-01', name: 'National Day' },
    { date: '2025-10-07', name: 'The day following Mid-Autumn Festival' },
    { date: '2025-10-29', name: 'Chung Yeung Festival' },
    { date: '2025-12-25', name: 'Christmas Day' },
    { date: '2025-12-26', name: 'The first weekday after Christmas Day' },

    { date: '2026-01-01', name: "New Year's Day" },
    { date: '2026-02-17', name: "Lunar New Year's Day" },
    { date: '2026-02-18', name: 'The second day of Lunar New Year' },
    { date: '2026-02-19', name: 'The third day of Lunar New Year' },
    { date: '2026-04-03', name: 'Good Friday' },
    { date: '2026-04-06', name: 'The day following Ching Ming Festival' },
    { date: '2026-04-07', name: 'The day following Easter Monday' },
    { date: '2026-05-01', name: 'Labour Day' },
    { date: '2026-05-25', name: "The day following Buddha's Birthday" },
    { date: '2026-06-19', name: 'Tuen Ng Festival' },
    { date: '2026-07-01', name: 'HKSAR Establishment Day' },
    { date: '2026-10-01', name: 'National Day' },
    { date: '2026-10-19', name: 'The day following Chung Yeung Festival' },
    { date: '2026-12-25', name: 'Christmas Day' },

    { date: '2027-01-01', name: "New Year's Day" },
    { date: '2027-02-08', name: 'The third day of Lunar New Year' },
    { date: '2027-02-09', name: 'The fourth day of Lunar New Year' },
    { date: '2027-03-26', name: 'Good Friday' },
    { date: '2027-03-29', name: 'Easter Monday' },
    { date: '2027-04-05', name: 'Ching Ming Festival' },
    { date: '2027-05-13', name: "Buddha's Birthday" },
    { date: '2027-06-09', name: 'Tuen Ng Festival' },
    { date: '2027-07-01', name: 'HKSAR Establishment Day' },
    { date: '2027-09-16', name: 'The day following Mid-Autumn Festival' },
    { date: '2027-10-01', name: 'National Day' },
    { date: '2027-10-08', name: 'Chung Yeung Festival' },
    { date: '2027-12-27', name: 'The first weekday after Christmas Day' },
  ],

  // NYSE Rule 7.2: Saturday holidays are observed on Friday, Sunday ones on Monday, except that
  // New Year's Day on a Saturday is not observed at all (2028).
  US: [
    { date: '2023-01-02', name: "New Year's Day (observed)" },
    { date: '2023-01-16', name: 'Martin Luther King, Jr. Day' },
    { date: '2023-02-20', name: "Washington's Birthday" },
    { date: '2023-04-07', name: 'Good Friday' },
    { date: '2023-05-29', name: 'Memorial Day' },
    { date: '2023-06-19', name: 'Juneteenth' },
    { date: '2023-07-04', name: 'Independence Day' },
    { date: '2023-09-04', name: 'Labor Day' },
    { date: '2023-11-23', name: 'Thanksgiving Day' },
    { date: '2023-12-25', name: 'Christmas Day' },

    { date: '2024-01-01', name: "New Year's Day" },
    { date: '2024-01-15', name: 'Martin Luther King, Jr. Day' },
    { date: '2024-02-19', name: "Washington's Birthday" },
    { date: '2024-03-29', name: 'Good Friday' },
    { date: '2024-05-27', name: 'Memorial Day' },
    { date: '2024-06-19', name: 'Juneteenth' },
    { date: '2024-07-04', name: 'Independence Day' },
    { date: '2024-09-02', name: 'Labor Day' },
    { date: '2024-11-28', name: 'Thanksgiving Day' },
    { date: '2024-12-25', name: 'Christmas Day' },

    { date: '2025-01-01', name: "New Year's Day" },
    { date: '2025-01-09', name: 'National Day of Mourning for President Carter' },
    { date: '2025-01-20', name: 'Martin Luther King, Jr. Day' },
    { date: '2025-02-17', name: "Washington's Birthday" },
    { date: '2025-04-18', name: 'Good Friday' },
    { date: '2025-05-26', name: 'Memorial Day' },
    { date: '2025-06-19', name: 'Juneteenth' },
    { date: '2025-07-04', name: 'Independence Day' },
    { date: '2025-09-01', name: 'Labor Day' },
    { date: '2025-11-27', name: 'Thanksgiving Day' },
    { date: '2025-12-25', name: 'Christmas Day' },

    { date: '2026-01-01', name: "New Year's Day" },
    { date: '2026-01-19', name: 'Martin Luther King, Jr. Day' },
    { date: '2026-02-16', name: "Washington's Birthday" },
    { date: '2026-04-03', name: 'Good Friday' },
    { date: '2026-05-25', name: 'Memorial Day' },
    { date: '2026-06-19', name: 'Juneteenth' },
    { date: '2026-07-03', name: 'Independence Day (observed)' },
    { date: '2026-09-07', name: 'Labor Day' },
    { date: '2026-11-26', name: 'Thanksgiving Day' },
    { date: '2026-12-25', name: 'Christmas Day' },

    { date: '2027-01-01', name: "New Year's Day" },
    { date: '2027-01-18', name: 'Martin Luther King, Jr. Day' },
    { date: '2027-02-15', name: "Washington's Birthday" },
    { date: '2027-03-26', name: 'Good Friday' },
    { date: '2027-05-31', name: 'Memorial Day' },
    { date: '2027-06-18', name: 'Juneteenth (observed)' },
    { date: '2027-07-05', name: 'Independence Day (observed)' },
    { date: '2027-09-06', name: 'Labor Day' },
    { date: '2027-11-25', name: 'Thanksgiving Day' },
    { date: '2027-12-24', name: 'Christmas Day (observed)' },

    { date: '2028-01-17', name: 'Martin Luther King, Jr. Day' },
    { date: '2028-02-21', name: "Washington's Birthday" },
    { date: '2028-04-14', name: 'Good Friday' },
    { date: '2028-05-29', name: 'Memorial Day' },
    { date: '2028-06-19', name: 'Juneteenth' },
    { date: '2028-07-04', name: 'Independence Day' },
    { date: '2028-09-04', name: 'Labor Day' },
    { date: '2028-11-23', name: 'Thanksgiving Day' },
    { date: '2028-12-25', name: 'Christmas Day' },
  ],
};

// HK: morning session only on the eves of Christmas, New Year and Lunar New Year when they are
// trading days. US: 13:00 close on the day before Independence Day, the day after Thanksgiving
// and Christmas Eve, when NYSE announces them.
export const EARLY_CLOSES: Record<Region, readonly EarlyClose[]> = {
  CN: [],
  HK: [
    { date: '2024-02-09', name: "Lunar New Year's Eve", close: '12:00' },
    { date: '2024-12-24', name: 'Christmas Eve', close: '12:00' },
    { date: '2024-12-31', name: "New Year's Eve", close: '12:00' },
    { date: '2025-01-28', name: "Lunar New Year's Eve", close: '12:00' },
    { date: '2025-12-24', name: 'Christmas Eve', close: '12:00' },
    { date: '2025-12-31', name: "New Year's Eve", close: '12:00' },
    { date: '2026-02-16', name: "Lunar New Year's Eve", close: '12:00' },
    { date: '2026-12-24', name: 'Christmas Eve', close: '12:00' },
    { date: '2026-12-31', name: "New Year's Eve", close: '12:00' },
    { date: '2027-02-05', name: "Lunar New Year's Eve", close: '12:00' },
    { date: '2027-12-24', name: 'Christmas Eve', close: '12:00' },
    { date: '2027-12-31', name: "New Year's Eve", close: '12:00' },
  ],
  US: [
    { date: '2023-07-03', name: 'Day before Independence Day', close: '13:00' },
    { date: '2023-11-24', name: 'Day after Thanksgiving', close: '13:00' },
    { date: '2024-07-03', name: 'Day before Independence Day', close: '13:00' },
    { date: '2024-11-29', name: 'Day after Thanksgiving', close: '13:00' },
    { date: '2024-12-24', name: 'Christmas Eve', close: '13:00' },
    { date: '2025-07-03', name: 'Day before Independence Day', close: '13:00' },
    { date: '2025-11-28', name: 'Day after Thanksgiving', close: '13:00' },
    { date: '2025-12-24', name: 'Christmas Eve', close: '13:00' },
    { date: '2026-11-27', name: 'Day after Thanksgiving', close: '13:00' },
    { date: '2026-12-24', name: 'Christmas Eve', close: '13:00' },
    { date: '2027-11-26', name: 'Day after Thanksgiving', close: '13:00' },
    { date: '2028-07-03', name: 'Day before Independence Day', close: '13:00' },
    { date: '2028-11-24', name: 'Day after Thanksgiving', close: '13:00' },
  ],
};
