/**
 * Lets queued events run between two slices of long synchronous work (a prefill chunk, a converted layer): a
 * cancel or another request is read there instead of after the whole job. setImmediate, not a resolved promise,
 * which would run before the event loop polls for I/O.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
