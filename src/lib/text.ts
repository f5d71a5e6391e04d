/**
 * Why `text` cannot be stored as text, or null: a NUL character (PostgreSQL's text and jsonb refuse
 * it; SQLite would keep it) or a lone UTF-16 surrogate (not Unicode text: PostgreSQL's jsonb
 * refuses it and its text would get U+FFFD). Phrased to follow the field's name.
 */
export function textProblem(text: string): string | null {
  if (text.includes("\u0000")) return "must not contain NUL characters (\\u0000)";
  if (!text.isWellFormed()) return "must be valid Unicode text (it has a lone surrogate)";
  return null;
}

/**
 * `text` as it can be stored: NUL characters and lone surrogates replaced by U+FFFD, as a decoder
 * replaces what it cannot read. For text the outside world sends that is kept, not refused (a
 * carrier's inbound message).
 */
export function storableText(text: string): string {
  return textProblem(text) === null ? text : text.toWellFormed().replaceAll("\u0000", "\uFFFD");
}
