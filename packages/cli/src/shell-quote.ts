/**
 * A word as a POSIX shell reads it back unchanged: as it is when it has nothing the shell would split or
 * expand, else in single quotes (a single quote inside written '\''). For the commands certkit prints for the
 * user to paste, whose paths may hold spaces ("My Projects"). By hand: docs/adr/1896-shell-quoting-by-hand.md.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
