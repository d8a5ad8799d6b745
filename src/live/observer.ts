/** What live delivery reports to the metrics (src/observability/metrics.ts implements it). */
export interface LiveObserver {
  /** Events a poll published (messages and unreadable records). */
  published(count: number): void;
  pollFailed(): void;
  /** This copy took over polling a number from a copy that went quiet. */
  takeover(): void;
  /** A subscriber ended by the gateway: it fell behind, or its resume point was too old. */
  dropped(reason: 'slow' | 'resync'): void;
}
