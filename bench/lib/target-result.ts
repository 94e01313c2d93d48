/** One target of the issues, evaluated on a results.json; `pass` undefined: not measured. */
export interface TargetResult {
  readonly name: string;
  readonly measured: string;
  readonly pass: boolean | undefined;
}
