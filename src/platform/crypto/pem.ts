/** One PEM block (RFC 7468): its label and its text from BEGIN to END. */
export interface PemBlock {
  label: string;
  text: string;
}

/**
 * A block from where the last one ended: whitespace, the BEGIN line, base64 and whitespace only
 * (no headers, so no other BEGIN or END inside), the END line of the same label. Sticky: it
 * matches there or not at all, so nothing can be skipped between blocks.
 */
const BLOCK = /\s*(-----BEGIN ([A-Z0-9]+(?: [A-Z0-9]+)*)-----[ \t]*\r?\n[A-Za-z0-9+/=\s]*?-----END \2-----)/y;

/**
 * The PEM blocks of a text, in order; null when there is none, or when anything but whitespace
 * lies before, between or after them (a subject line, a lone BEGIN, a truncated block, trailing
 * junk): what node:crypto would quietly skip must not be taken for part of a certificate or key.
 * Whether a block's base64 decodes to what its label says is for node:crypto to check.
 */
export function pemBlocks(text: string): PemBlock[] | null {
  const blocks: PemBlock[] = [];
  BLOCK.lastIndex = 0;
  while (text.slice(BLOCK.lastIndex).trim() !== '') {
    const m = BLOCK.exec(text);
    if (!m) return null;
    blocks.push({ label: m[2], text: m[1] });
  }
  return blocks.length > 0 ? blocks : null;
}
