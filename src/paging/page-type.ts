/** A page of a list, as every list route answers it: no imports, so the console (console/src) takes it as is. */
export interface Page<T> {
  items: T[]
  /** The cursor of the next page; null on the last one. */
  next: string | null
}
