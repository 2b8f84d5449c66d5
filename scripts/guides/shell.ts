/**
 * The shell side of the guide runner: the bash program that runs a document's blocks one by
 * one in a single process (so variables carry from block to block), and the rewriting of
 * each block before it runs (the four example addresses to the ports chosen, and the
 * expected-status comment of a `curl` line into what the `curl` function checks).
 */
import { logicalCommands } from "./blocks";

/** The example ports a guide writes, rewritten to free ones (docs/README.md, "How the guides are tested"). */
export interface Ports {
  http: number;
  smtp: number;
  listen: number;
  model: number;
}

export const EXAMPLE_PORTS: Ports = { http: 8080, smtp: 2525, listen: 9000, model: 8081 };

/** `localhost:8080` (and 127.0.0.1:8080) -> the chosen port, for each of the four; `--port 9000` of `bunker listen` too. */
export function rewritePorts(text: string, ports: Ports): string {
  let out = text;
  for (const key of Object.keys(EXAMPLE_PORTS) as (keyof Ports)[]) {
    const from = EXAMPLE_PORTS[key];
    out = out.replace(new RegExp(`\\b(localhost|127\\.0\\.0\\.1):${from}\\b`, "g"), `$1:${ports[key]}`);
  }
  return out.replace(/(--port[ =])9000\b/g, `$1${ports.listen}`);
}

/** A comment whose first word is an HTTP status: `# 403 FORBIDDEN: a read-only key`. */
const STATUS_COMMENT = /\s#\s*([1-5]\d\d)\b[^'"]*$/;

/**
 * Prefixes each plain `curl` command that ends in a status comment with
 * `__GUIDE_EXPECT=<status> `, which the curl function then requires exactly. The line count
 * stays the same (failures are reported by line). A status comment anywhere else is a
 * mistake: returned as a problem with its 0-based line in the block.
 */
export function markExpectedStatuses(text: string): { text: string; problems: { index: number; message: string }[] } {
  const lines = text.split("\n");
  const problems: { index: number; message: string }[] = [];
  for (const cmd of logicalCommands(text)) {
    const m = STATUS_COMMENT.exec(lines[cmd.last]);
    if (!m) continue;
    const code = cmd.text.slice(0, cmd.text.length - (lines[cmd.last].length - m.index)).trim();
    if (isPlainCurl(code)) lines[cmd.first] = lines[cmd.first].replace(/^(\s*)curl\b/, `$1__GUIDE_EXPECT=${m[1]} curl`);
    else problems.push({ index: cmd.first, message: `an expected status (# ${m[1]}) only goes on a plain \`curl ...\` command (no pipe, no $(...), no &&)` });
  }
  return { text: lines.join("\n"), problems };
}

function isPlainCurl(code: string): boolean {
  if (!/^curl\s/.test(code)) return false;
  // Quoted text may hold any character; outside it, a pipe, a substitution or a list is not plain.
  const unquoted = code.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, "''");
  return !/[|;&`]|\$\(/.test(unquoted);
}

/**
 * The bash program. It reads block numbers on stdin; each block file runs (sourced, so its
 * variables stay) with `set -eo pipefail` and its stdin on /dev/null (a command reading
 * stdin must not eat the runner's input). Markers on stdout tell the runner a block ended,
 * or which line of it failed (bash's own line number within the block file).
 */
export function driverScript(mark: string): string {
  return String.raw`
exec 2>&1
shopt -s inherit_errexit
set -o pipefail
__guide_mark='${mark}'
trap 'printf "\n%s FAIL %s\n" "$__guide_mark" "$LINENO"' ERR

# The binary under test, as a reader's 'bunker' (alias bunker='bun src/main.ts' from a checkout).
bunker() { "$__GUIDE_BIN" "$@"; }

# curl, failing on an HTTP status >= 400 unless the line said which status it shows
# (__GUIDE_EXPECT, from its '# 403 ...' comment): then exactly that status.
curl() {
  local expect="${"${"}__GUIDE_EXPECT:-}" fmt="" errexit=0 rc tag code method url bad="" seen=0
  local -a args=()
  while (($#)); do
    case "$1" in
      -w|--write-out) fmt="$2"; shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  [[ $- == *e* ]] && errexit=1
  set +e
  local err="$__guide_dir/curl.err" body="$__guide_dir/curl.body"
  command curl "${"${"}args[@]}" -w "$fmt%{stderr}\n__GUIDE_HTTP %{http_code} %{method} %{url_effective}\n" 2>"$err" | tee "$body"
  rc=${"${"}PIPESTATUS[0]}
  grep -v -e '^__GUIDE_HTTP ' -e '^$' "$err" >&2
  while read -r tag code method url; do
    [[ $tag == __GUIDE_HTTP ]] || continue
    seen=1
    if [[ -n $expect ]]; then
      [[ $code == "$expect" ]] || bad="expected HTTP $expect, got $code from $method $url"
    elif ((10#$code >= 400)); then
      bad="HTTP $code from $method $url (a line meant to show an error ends with '# $code ...')"
    fi
  done <"$err"
  if [[ -z $bad && $rc -ne 0 && ! ($rc -eq 22 && -n $expect) ]]; then bad="curl exited with $rc"; fi
  if [[ -z $bad && -n $expect && $seen -eq 0 ]]; then bad="expected HTTP $expect, got no response"; fi
  ((errexit)) && set -e
  if [[ -n $bad ]]; then
    printf '\nguide: %s\n' "$bad" >&2
    if [[ -s $body ]]; then printf 'guide: the response body: %s\n' "$(head -c 2000 "$body")" >&2; fi
    return 1
  fi
  return 0
}

while IFS= read -r __guide_block; do
  [[ $__guide_block == end ]] && break
  set -e
  source "$__guide_dir/block-$__guide_block.sh" </dev/null
  set +e
  printf '\n%s DONE %s\n' "$__guide_mark" "$__guide_block"
done
`;
}
