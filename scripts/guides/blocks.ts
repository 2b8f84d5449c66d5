/**
 * The blocks of a guide (README.md, docs/*.md) as the guide runner sees them: every fenced
 * code block with the line of its opening fence, and the `<!-- guide: ... -->` directive
 * that precedes it. Only ```sh fences are run (docs/README.md, "How the guides are tested").
 *
 * A line scanner rather than a markdown library: the runner needs each block's line numbers
 * (to name the failing line) and the raw comment line before it, which markdown lexers drop.
 */

export type BlockKind = "run" | "start" | "not-run";

export interface Block {
  kind: BlockKind;
  /** 1-based line of the opening fence. */
  line: number;
  /** The block's content (fence lines excluded, the fence's indentation removed). */
  text: string;
  /** Why a not-run block is not run. */
  reason?: string;
}

export interface ParsedGuide {
  blocks: Block[];
  /** Mistakes in the document's use of the rules, each with its line; a run fails on any. */
  problems: string[];
}

/** Shell fences that look runnable but are not `sh`: a reader would expect them to be tested. */
const SHELL_LIKE = new Set(["bash", "shell", "console", "zsh", "shell-session", "sh-session"]);

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const DIRECTIVE = /^\s*<!--\s*guide:\s*(.*?)\s*-->\s*$/;

export function parseGuide(markdown: string): ParsedGuide {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  const problems: string[] = [];
  let pending: { line: number; kind: "start" | "not-run"; reason?: string } | null = null;
  let seenStart = false;

  for (let i = 0; i < lines.length; i++) {
    const directive = DIRECTIVE.exec(lines[i]);
    if (directive) {
      if (pending) problems.push(`line ${pending.line}: the directive is not followed by a \`\`\`sh block`);
      const body = directive[1];
      const notRun = /^not run:\s*(.*)$/.exec(body);
      if (body === "start") pending = { line: i + 1, kind: "start" };
      else if (notRun && notRun[1]) pending = { line: i + 1, kind: "not-run", reason: notRun[1] };
      else {
        problems.push(`line ${i + 1}: unknown directive "${body}" (use "guide: start" or "guide: not run: <reason>")`);
        pending = null;
      }
      continue;
    }
    const open = FENCE.exec(lines[i]);
    if (!open) {
      if (pending && lines[i].trim() !== "") {
        problems.push(`line ${pending.line}: the directive is not followed by a \`\`\`sh block`);
        pending = null;
      }
      continue;
    }
    const [, indent, fence, info] = open;
    const close = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    const content: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !close.test(lines[j]); j++) content.push(stripIndent(lines[j], indent.length));
    if (j === lines.length) problems.push(`line ${i + 1}: the code block is never closed`);
    const line = i + 1;
    const lang = info.toLowerCase();
    if (lang === "sh") {
      const kind = pending?.kind ?? "run";
      if (kind === "start") {
        if (seenStart) problems.push(`line ${line}: a second start block (the server starts once per document)`);
        seenStart = true;
      }
      blocks.push({ kind, line, text: content.join("\n"), ...(pending?.reason ? { reason: pending.reason } : {}) });
    } else {
      if (pending) problems.push(`line ${pending.line}: the directive is followed by a \`\`\`${info} block, not \`\`\`sh`);
      if (SHELL_LIKE.has(lang)) problems.push(`line ${line}: a \`\`\`${info} block: use \`\`\`sh (run by the tests) or \`\`\`text (read only)`);
    }
    pending = null;
    i = j;
  }
  if (pending) problems.push(`line ${pending.line}: the directive is not followed by a \`\`\`sh block`);
  const runnable = blocks.filter((b) => b.kind !== "not-run");
  if (runnable.length === 0) problems.push("no block runs: a guide needs at least one ```sh block that is not marked not run");
  else if (!seenStart) problems.push("no `<!-- guide: start -->` block: each guide starts its own server");
  else if (runnable[0].kind !== "start") problems.push(`line ${runnable[0].line}: a block runs before the server starts (the start block comes first)`);
  return { blocks, problems };
}

function stripIndent(line: string, n: number): string {
  let k = 0;
  while (k < n && line[k] === " ") k++;
  return line.slice(k);
}

/**
 * The logical commands of a block: physical lines joined where one ends in a backslash,
 * each with the 0-based index of its first line in the block.
 */
export function logicalCommands(text: string): { first: number; last: number; text: string }[] {
  const lines = text.split("\n");
  const out: { first: number; last: number; text: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = i;
    let joined = lines[i];
    while (/\\$/.test(lines[i]) && i + 1 < lines.length) joined = joined.slice(0, -1) + " " + lines[++i];
    out.push({ first, last: i, text: joined });
  }
  return out;
}
