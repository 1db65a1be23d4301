/**
 * kubectl's human tables read back as cells: every line is cut at the header's column offsets (kubectl aligns
 * columns with a tabwriter), so an empty cell stays an empty string. Returns the header row first.
 */
export function tableRows(out: string): string[][] {
  const lines = out.replace(/\n+$/, '').split('\n');
  const starts = [...lines[0].matchAll(/(?:^|\s{2,})(\S)/g)].map((m) => (m.index ?? 0) + m[0].length - 1);
  return lines.map((line) =>
    starts.map((start, i) => line.slice(start, i + 1 < starts.length ? starts[i + 1] : undefined).trim()),
  );
}

/** The table's rows as records keyed by the header's column names (NAME, TYPE, …). */
export function tableRecords(out: string): Record<string, string>[] {
  const [header, ...rows] = tableRows(out);
  return rows.map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i]])));
}
