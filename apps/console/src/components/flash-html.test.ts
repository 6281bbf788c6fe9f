import { describe, expect, it } from 'vitest';
import { flashHtml } from './flash-html.tsx';

describe('flashHtml', () => {
  it('turns line breaks into <br> and keeps the allowed markup', () => {
    expect(flashHtml('one\ntwo\r\n<strong>three</strong> <em>4</em> <b>5</b>')).toBe(
      'one<br>two<br><strong>three</strong> <em>4</em> <b>5</b>',
    );
    expect(flashHtml('<a href="/forget/">reset</a>')).toBe('<a href="/forget/">reset</a>');
  });

  it('drops everything else', () => {
    expect(flashHtml('<img src=x onerror=alert(1)><script>alert(2)</script><p>text</p>')).toBe('text');
    expect(flashHtml('<a href="javascript:alert(1)" onclick="x()">link</a>')).toBe('<a>link</a>');
  });
});
