/** One target of the issues, evaluated on a results.json; `pass` undefined: not measured. */
export interface TargetResult {
  readonly name: string;
  readonly measured: string;
  readonly pass: boolean | undefined;
  /** The README's short form: the target in a few words; rows with the same brief become one row. */
  readonly brief?: string;
  /** The measured value in a few words, for the README's short row. */
  readonly headline?: string;
}
