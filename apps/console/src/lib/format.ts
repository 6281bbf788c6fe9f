/**
 * Dates as the console shows them. The server speaks ISO 8601 in UTC; people read local time,
 * except where the spec counts in UTC (billing periods, plan changes), which say so.
 */
const LOCALES: Record<string, string> = { ja: 'ja-JP', en: 'en-GB' };

function localeOf(language: string): string {
  return LOCALES[language] ?? LOCALES.ja!;
}

/** An ISO 8601 instant in the language's format; what the server sent when it is not one. */
function formatInstant(iso: string, language: string, options: Intl.DateTimeFormatOptions): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(localeOf(language), options).format(date);
}

const DAY: Intl.DateTimeFormatOptions = { year: 'numeric', month: '2-digit', day: '2-digit' };

/** Date and time to the minute; `timeZone` is for tests and UTC displays (default: the browser's). */
export function formatDateTime(iso: string, language: string, timeZone?: string): string {
  return formatInstant(iso, language, {
    ...DAY,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    ...(timeZone ? { timeZone } : {}),
  });
}

/** A calendar date in UTC: the day a plan change takes effect. */
export function formatUtcDate(iso: string, language: string): string {
  return formatInstant(iso, language, { ...DAY, timeZone: 'UTC' });
}

export type TextPart = { kind: 'text' | 'link'; value: string };

const URL_PATTERN = /https?:\/\/[^\s<>"']+/g;

/** Plain text split around its http(s) URLs, so they can be shown as links without any HTML. */
export function splitLinks(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    // A sentence's closing punctuation is not part of the address.
    const value = match[0].replace(/[.,)\]。、]+$/, '');
    const start = match.index;
    if (start > last) parts.push({ kind: 'text', value: text.slice(last, start) });
    parts.push({ kind: 'link', value });
    last = start + value.length;
  }
  if (last < text.length) parts.push({ kind: 'text', value: text.slice(last) });
  return parts;
}
