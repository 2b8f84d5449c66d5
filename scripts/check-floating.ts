/**
 * Lists promises nobody awaits: a statement whose value is a promise and that is not
 * `await`ed, `void`ed, returned or handed on. With async stores, a forgotten `await` on a
 * write inside a transaction is a write that may run after the commit (on PostgreSQL on
 * another connection), so the test suite runs this check (test/arch/floating.test.ts).
 *
 *   bun scripts/check-floating.ts [path-prefix ...]   # prints file:line: text; exit 1 if any
 *
 * `void promise` marks a deliberate fire-and-forget (and must handle its own errors).
 */
import ts from "typescript";
import { join, relative } from "node:path";

export function floatingPromises(root: string, prefixes: string[] = []): string[] {
  const configPath = join(root, "tsconfig.json");
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();
  const found: string[] = [];

  const isPromise = (t: ts.Type): boolean => {
    if (t.isUnion()) return t.types.some(isPromise);
    const then = t.getProperty("then");
    if (!then) return false;
    const sym = t.getSymbol() ?? t.aliasSymbol;
    return sym?.getName() === "Promise" || sym?.getName() === "PromiseLike" || checker.getTypeOfSymbol(then).getCallSignatures().length > 0;
  };

  /** `p.catch(...)` and `p.then(ok, fail)` deal with the rejection themselves. */
  const handlesRejection = (e: ts.Expression) =>
    ts.isCallExpression(e) &&
    ts.isPropertyAccessExpression(e.expression) &&
    (e.expression.name.text === "catch" || (e.expression.name.text === "then" && e.arguments.length === 2));

  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || sf.fileName.includes("/node_modules/")) continue;
    const rel = relative(root, sf.fileName);
    if (prefixes.length && !prefixes.some((p) => rel.startsWith(p))) continue;
    const visit = (node: ts.Node) => {
      if (ts.isExpressionStatement(node)) {
        let e = node.expression;
        while (ts.isParenthesizedExpression(e)) e = e.expression;
        const deliberate =
          ts.isAwaitExpression(e) ||
          ts.isVoidExpression(e) ||
          (ts.isBinaryExpression(e) && e.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && e.operatorToken.kind <= ts.SyntaxKind.LastAssignment) ||
          handlesRejection(e);
        if (!deliberate && isPromise(checker.getTypeAtLocation(e))) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
          found.push(`${rel}:${line + 1}: ${node.getText(sf).split("\n")[0]!.slice(0, 120)}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

if (import.meta.main) {
  const root = join(import.meta.dir, "..");
  const found = floatingPromises(root, process.argv.slice(2));
  for (const f of found) console.log(f);
  console.error(`${found.length} floating promise(s)`);
  process.exit(found.length ? 1 : 0);
}
