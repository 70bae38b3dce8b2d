/** A long-lived answer written piece by piece (an event stream), open until either side ends it. */
export interface StreamSink {
  /** Writes a chunk now; false when the client reads slower than it is written (wait for `drained`). */
  write(chunk: string): boolean;
  /** Resolves once buffered chunks went out, or the stream closed. */
  drained(): Promise<void>;
  readonly closed: boolean;
  /** Runs once when the stream closes, whichever side ends it. */
  onClose(listener: () => void): void;
  /** Ends the answer. */
  end(): void;
}
