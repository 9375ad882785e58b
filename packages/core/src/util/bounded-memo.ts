/**
 * `compute` memoised by its argument, keeping at most `limit` results: all are dropped when it is
 * full (the inputs that repeat — a catalogue's words and entries — come back at once).
 */
export function boundedMemo<K, V>(compute: (key: K) => V, limit: number): (key: K) => V {
  const memo = new Map<K, V>();
  return (key) => {
    let value = memo.get(key);
    if (value === undefined) {
      value = compute(key);
      if (memo.size >= limit) memo.clear();
      memo.set(key, value);
    }
    return value;
  };
}
