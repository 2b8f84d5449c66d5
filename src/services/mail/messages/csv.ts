/**
 * CSV cells for the message export: RFC 4180 (fields with a comma, quote, CR or LF are
 * quoted, quotes doubled, CRLF line ends) and safe to open in a spreadsheet: a text cell
 * starting with =, +, -, @, a tab or a CR is prefixed with an apostrophe (OWASP's advice
 * against formula injection), so it shows as text instead of being evaluated.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return String(v);
  let s = v;
  if (FORMULA_START.test(s)) s = `'${s}`;
  if (/[",\r\n]/.test(s)) s = `"${s.replace(/"/g, '""')}"`;
  return s;
}

export const csvRow = (cells: (string | number | null | undefined)[]) => `${cells.map(csvCell).join(",")}\r\n`;
