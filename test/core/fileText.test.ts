import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTextFile, readTextFileSync } from '../../lib/core/fileText.js';
import { CampaignFileError } from '../../lib/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'file-text-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** What both readers make of a file of these bytes: its text, or the error's message. */
async function read(bytes: Uint8Array): Promise<{ async: string; sync: string }> {
  const file = path.join(dir, `f-${Math.random().toString(36).slice(2)}.txt`);
  await writeFile(file, bytes);
  const outcome = async (f: () => Promise<string>): Promise<string> => {
    try {
      return await f();
    } catch (err) {
      expect(err).toBeInstanceOf(CampaignFileError);
      return `error: ${(err as Error).message.replace(`${file}: `, '')}`;
    }
  };
  return {
    async: await outcome(() => readTextFile(file, 'test file', 'text')),
    sync: await outcome(async () => readTextFileSync(file, 'test file', 'text')),
  };
}

const BINARY = 'error: is not a text file (it holds binary data); expected text';

describe('reading a file the campaign names as text', () => {
  it('gives UTF-8 text as it is, without a leading byte-order mark (one only)', async () => {
    const text = 'stories:\n  - id: 名前 — ü, é, 😀\n';
    expect(await read(utf8(text))).toEqual({ async: text, sync: text });
    expect(await read(utf8(`\uFEFF${text}`))).toEqual({ async: text, sync: text });
    expect(await read(utf8(`\uFEFF\uFEFF${text}`))).toEqual({ async: `\uFEFF${text}`, sync: `\uFEFF${text}` });
    expect(await read(utf8(''))).toEqual({ async: '', sync: '' });
  });

  it('refuses bytes that are not text: a NUL byte, bytes that are not UTF-8, an encoded surrogate, a replacement character', async () => {
    for (const bytes of [
      Buffer.concat([utf8('name: x\n'), Buffer.from([0]), utf8('more\n')]),
      Buffer.concat([utf8('name: x\n'), Buffer.from([0xff, 0xfe]), utf8('\n')]),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.concat([utf8('a'), Buffer.from([0xed, 0xa0, 0x80])]),
      utf8('a text once decoded wrongly: \uFFFD\n'),
      // A sequence cut at the end of the file.
      utf8('ü').subarray(0, 1),
    ]) {
      expect(await read(bytes)).toEqual({ async: BINARY, sync: BINARY });
    }
  });
});
