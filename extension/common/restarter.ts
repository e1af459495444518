// Serialises server restarts: bursts of requests collapse into one restart after the current one.

/** Restarts collapse: while one runs, further requests only mark that another is needed. */
export class Restarter {
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly doRestart: () => Promise<void>) {}

  /** Restart after `delayMs` of quiet (settings edits come in bursts). */
  schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.now(), delayMs);
  }

  async now(): Promise<void> {
    clearTimeout(this.timer);
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.doRestart();
      } while (this.again);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
