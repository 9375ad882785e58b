/** One page of a listing: the items, how many there are in all, and where the page starts. */
export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}
