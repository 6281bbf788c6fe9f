import DOMPurify from 'dompurify';

// Messages may carry a little markup (a link to the reset page, emphasis); nothing else survives.
const ALLOWED = { ALLOWED_TAGS: ['a', 'b', 'strong', 'em', 'br'], ALLOWED_ATTR: ['href'] };

export function flashHtml(text: string): string {
  return DOMPurify.sanitize(text.replace(/\r?\n/g, '<br>'), ALLOWED);
}

/** A message's text, sanitised, with its line breaks kept. Loaded on the first message shown. */
export default function FlashHtml({ text }: { text: string }) {
  return <span dangerouslySetInnerHTML={{ __html: flashHtml(text) }} />;
}
