/**
 * A local run's result file as the AWS pipeline would write it: the local analysis names its data
 * as `<data folder>/campaigns/<c>/` (no local path in a file meant to be sent), the pipeline as its
 * S3 prefix. Everything else must be byte for byte the same, the spend summed from the stored
 * replies in the report's header included.
 */
export function asRemote(local: string, campaign: string, s3Source: string): string {
  const here = `<data folder>/campaigns/${campaign}/`;
  return local
    .replaceAll(here, s3Source)
    .replaceAll(here.replaceAll('<', '&lt;').replaceAll('>', '&gt;'), s3Source);
}

/**
 * A local result file without its spend (report.html's row, summary.md's line and any warning
 * under it): what an AWS report of a campaign with a
 * `runs_on: gpu` model shows, since its GPU jobs charge instance time, not replies
 * (lib/analysis/storedSpend.ts awsReportSpend).
 */
export function withoutSpend(local: string): string {
  return local.replace(/<div><dt>Spend<\/dt><dd>[^<]*<\/dd><\/div>/, '').replace(/\n\nSpend: [^\n]*(\n\n> \*\*[^\n]*\*\*)?/, '');
}
