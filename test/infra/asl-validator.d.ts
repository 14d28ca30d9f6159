// asl-validator ships no types; the part the tests use.
declare module 'asl-validator' {
  interface AslResult {
    readonly isValid: boolean;
    readonly errors: readonly { readonly message?: string }[];
    errorsText(separator?: string): string;
  }
  const aslValidator: (definition: unknown) => AslResult;
  export default aslValidator;
}
