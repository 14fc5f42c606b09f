/** [date YYYY-MM-DD, name]: a weekday the exchange did not trade. */
export type ClosureRow = readonly [date: string, name: string];
/** [date, name, open, close]: exchange-local HH:MM replacing the day's regular open / last close (null: regular). */
export type ShortDayRow = readonly [date: string, name: string, open: string | null, close: string | null];
