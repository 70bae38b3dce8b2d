import { randomInt } from 'node:crypto';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const CHARS = `${LETTERS}0123456789`;

/** A random 8-character lowercase schema id, starting with a letter (e.g. "td5smq0f"). */
export function randomSchemaId(): string {
  let id = LETTERS[randomInt(LETTERS.length)]!;
  while (id.length < 8) id += CHARS[randomInt(CHARS.length)]!;
  return id;
}
