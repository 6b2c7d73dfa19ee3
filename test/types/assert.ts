/** Compile-time checks: `expectType<T>()(value)` fails to compile unless `value`'s type is exactly `T`. */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false

export function expectType<Expected> () {
  return <Actual>(value: Actual & (Equal<Actual, Expected> extends true ? unknown : never)): Actual => value
}
