import { execFileSync } from 'node:child_process';

/**
 * A `perf record` file's samples of one process, by kind of work (docs/adr/1205): kernel, TLS (OpenSSL and
 * node's TLS glue), Node's HTTP parser, V8's JSON, the garbage collector, strings, JavaScript and V8's builtins,
 * the rest of V8 and Node. Grouped by the sampled function's name (its innermost frame), so a category is the
 * CPU spent inside that kind of code, not below it.
 *
 * Usage: node bench/perf-categories.ts FILE PID [PID...]   (e.g. the files of bench:issuance-floor --perf=PREFIX)
 */

const [file, ...pids] = process.argv.slice(2);
if (!file || pids.length === 0) throw new Error('usage: node bench/perf-categories.ts FILE PID [PID...]');

const RULES: [string, RegExp][] = [
  [
    'TLS (OpenSSL, node::crypto)',
    /ssl|SSL|aes|AES|gcm|GCM|EVP_|sha256|SHA256|chacha|poly1305|BIO_|CRYPTO_|tls1|ossl_|OPENSSL|ecp_nistz|x25519|bn_|BN_|crypto::|TLSWrap|tls_/,
  ],
  ['HTTP parser (llhttp)', /llhttp|http_parser/],
  ['JSON parse and stringify', /Json|JSON/],
  ['garbage collection', /Heap::|Scavenge|MarkCompact|Sweeper|GCTracer|Marking|Evacuat|heap::|cppgc/],
  ['regular expressions', /RegExp|Irregexp/],
  ['strings and copies', /String|Utf8|utf8|Latin1|simdutf|memcpy|memmove|Internalize/],
];

function category(dso: string, symbol: string): string {
  if (dso.includes('kernel')) return 'kernel (system calls, TCP, scheduling)';
  for (const [name, rule] of RULES) if (rule.test(symbol)) return name;
  if (dso.startsWith('[JIT]') || dso.includes('perf-')) return 'JavaScript (compiled code)';
  if (symbol.startsWith('Builtins_')) return "V8's builtins (interpreter, inline caches, objects)";
  if (dso.startsWith('libc')) return 'libc (malloc, free)';
  return 'the rest of V8 and Node';
}

for (const pid of pids) {
  const report = execFileSync(
    'perf',
    ['report', '-i', file, '--pid', pid, '--no-children', '--sort', 'dso,sym', '-g', 'none', '--stdio'],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const shares = new Map<string, number>();
  let total = 0;
  for (const line of report.split('\n')) {
    const m = /^\s+([\d.]+)%\s+(\S+(?: tid \d+)?)\s+\[.\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const share = Number(m[1]);
    total += share;
    const name = category(m[2], m[3]);
    shares.set(name, (shares.get(name) ?? 0) + share);
  }
  process.stdout.write(`pid ${pid}: ${total.toFixed(1)}% of the file's samples\n`);
  for (const [name, share] of [...shares].sort((a, b) => b[1] - a[1])) {
    process.stdout.write(`  ${name.padEnd(52)} ${((100 * share) / total).toFixed(1).padStart(5)}%\n`);
  }
}
