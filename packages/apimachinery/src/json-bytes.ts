/**
 * The codes of JSON's structural characters, for the code that walks JSON text without parsing it (the
 * client's streaming list decoder, the server's depth check and its scans of stored objects). They are
 * ASCII, so each is both the UTF-8 byte and the UTF-16 `charCodeAt` value, and no byte of a multi-byte
 * UTF-8 character equals one of them.
 */

/** `"`, which opens and closes a string. */
export const QUOTE = 0x22;
/** `\`, which escapes the next character inside a string. */
export const BACKSLASH = 0x5c;
/** `{` */
export const OPEN_BRACE = 0x7b;
/** `}` */
export const CLOSE_BRACE = 0x7d;
/** `[` */
export const OPEN_BRACKET = 0x5b;
/** `]` */
export const CLOSE_BRACKET = 0x5d;
/** `,` */
export const COMMA = 0x2c;
/** `:` */
export const COLON = 0x3a;
