/**
 * A warning anyone can cause (an unauthenticated client, say) is logged at most once per
 * `intervalMs`: the first at once, and the next, after the interval, with how many were left out
 * in between. Nobody can fill the log, and the operator still sees that it goes on.
 */
export function throttled(
  log: (message: string) => void,
  intervalMs = 60_000,
  now: () => number = Date.now,
): (message: string, to?: (message: string) => void) => void {
  let nextAt = 0;
  let leftOut = 0;
  // `to`: this line's own logger (a request's), in place of `log`.
  return (message, to = log) => {
    const at = now();
    if (at < nextAt) {
      leftOut++;
      return;
    }
    to(leftOut === 0 ? message : `${message} (and ${leftOut} more like it since the last such line)`);
    leftOut = 0;
    nextAt = at + intervalMs;
  };
}
