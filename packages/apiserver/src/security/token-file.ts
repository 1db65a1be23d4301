import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import type { UserInfo } from './user.ts';

/**
 * kube-apiserver's static token file (`--token-auth-file`): CSV records `token,user,uid[,"group1,group2"]`,
 * read once at start. As kube's reader (Go's encoding/csv): records of any length, empty lines skipped, fields
 * quoted the CSV way; fewer than three columns is an error, an empty token is skipped, a token listed twice
 * keeps its last record.
 */
export async function loadTokenFile(
  path: string,
  warn: (message: string) => void = () => {},
): Promise<Map<string, UserInfo>> {
  const text = await readFile(path, 'utf8');
  let records: string[][];
  try {
    // Go's reader ends records at \n, with or without a \r before it, whatever the first line used.
    records = parse(text, {
      relax_column_count: true,
      skip_empty_lines: true,
      record_delimiter: ['\r\n', '\n'],
    });
  } catch (err) {
    throw new Error(`token file '${path}': ${(err as Error).message}`);
  }
  const tokens = new Map<string, UserInfo>();
  records.forEach((record, i) => {
    if (record.length < 3) {
      throw new Error(
        `token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length}`,
      );
    }
    const [token, name, uid, groups] = record;
    if (token === '') {
      warn(`empty token has been found in token file '${path}', record number '${i + 1}'`);
      return;
    }
    if (tokens.has(token))
      warn(`duplicate token has been found in token file '${path}', record number '${i + 1}'`);
    tokens.set(token, { name, uid, groups: groups === undefined ? [] : groups.split(',') });
  });
  return tokens;
}
