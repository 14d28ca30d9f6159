/**
 * A local run's result file as the AWS pipeline would write it: the local analysis names its data
 * as `<data folder>/campaigns/<c>/` (no local path in a file meant to be sent), the pipeline as its
 * S3 prefix. The local report.html also shows the spend against the cap, summed from the stored
 * replies; the AWS report function does not yet read it (docs/guarantees.md "Not yet guaranteed"),
 * so that one row of the header is left out. Everything else must be byte for byte the same.
 */
export function asRemote(local: string, campaign: string, s3Source: string): string {
  const here = `<data folder>/campaigns/${campaign}/`;
  return local
    .replaceAll(here, s3Source)
    .replaceAll(here.replaceAll('<', '&lt;').replaceAll('>', '&gt;'), s3Source)
    .replace(/<div><dt>Spend<\/dt><dd>[^<]*<\/dd><\/div>/, '');
}
