import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countProgress, Progress, type ProgressStream } from './progress.ts';

/** A stream that records what is written to it, a terminal or not. */
function stream(isTTY: boolean, columns = 80): ProgressStream & { text: string } {
  return {
    isTTY,
    columns,
    text: '',
    write(t: string) {
      this.text += t;
    },
  };
}

describe('progress line', () => {
  it('writes nothing when its stream is not a terminal, and lets printed lines through', () => {
    const err = stream(false);
    const out = stream(false);
    const progress = new Progress(err);
    progress.update('Renewing 1/2', { force: true });
    progress.print(out, 'line\n');
    progress.done();
    assert.equal(progress.enabled, false);
    assert.equal(err.text, '');
    assert.equal(out.text, 'line\n');
  });

  it('redraws in place on a terminal, at most every 100 ms unless forced, and erases itself when done', () => {
    let now = 1000;
    const err = stream(true);
    const progress = new Progress(err, { now: () => now });
    progress.update('a');
    progress.update('b'); // within 100 ms: not drawn
    now += 100;
    progress.update('c');
    progress.update('d', { force: true });
    progress.done();
    assert.equal(err.text, '\r\x1b[Ka\r\x1b[Kc\r\x1b[Kd\r\x1b[K');
  });

  it('prints lines above the status line: erase, the line, redraw', () => {
    const err = stream(true);
    const progress = new Progress(err);
    progress.update('Renewing 1/3', { force: true });
    progress.print(err, 'Manually triggered issuance of Certificate a/web\n');
    assert.equal(
      err.text,
      '\r\x1b[KRenewing 1/3\r\x1b[KManually triggered issuance of Certificate a/web\n\r\x1b[KRenewing 1/3',
    );
  });

  it('leaves the status line alone for lines going to a file or a pipe', () => {
    const err = stream(true);
    const file = stream(false);
    const progress = new Progress(err);
    progress.update('Renewing 1/3', { force: true });
    progress.print(file, 'Manually triggered issuance of Certificate a/web\n');
    assert.equal(err.text, '\r\x1b[KRenewing 1/3');
    assert.equal(file.text, 'Manually triggered issuance of Certificate a/web\n');
  });

  it('cuts a line wider than the terminal, which would otherwise wrap and defeat the carriage return', () => {
    const err = stream(true, 10);
    new Progress(err).update('0123456789abc', { force: true });
    assert.equal(err.text, '\r\x1b[K01234567…');
  });

  it('takes a terminal of unknown width (0 columns) as 80 wide', () => {
    const err = stream(true, 0);
    new Progress(err).update('Renewing 1/2', { force: true });
    assert.equal(err.text, '\r\x1b[KRenewing 1/2');
  });

  it('counts work done with a percentage', () => {
    assert.equal(
      countProgress('Renewing', 250, 1000, 'Certificates'),
      'Renewing 250/1000 Certificates (25%)',
    );
    assert.equal(countProgress('Renewing', 0, 0, 'Certificates'), 'Renewing 0/0 Certificates (100%)');
  });
});
