import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/core/errors";
import { ActionRegistry } from "../../src/access/actions";
import {
  actionMatches,
  compilePolicy,
  effectiveActions,
  isAllowed,
  isAllowedByAll,
  policyCovers,
  resourceMatches,
  validatePolicy,
  type Policy,
  type Statement,
} from "../../src/access/policy";

const WS = "workspace/0190a1b2-0000-7000-8000-000000000001";
const WS2 = "workspace/0190a1b2-0000-7000-8000-000000000002";

const st = (actions: string[], resources: string[] = ["*"]): Statement => ({ effect: "allow", actions, resources });

function registry(): ActionRegistry {
  const r = new ActionRegistry();
  r.register("workspace", [
    { name: "workspace.read", description: "Read a workspace" },
    { name: "workspace.update", description: "Update a workspace" },
    { name: "workspace.delete", description: "Delete a workspace" },
  ]);
  r.register("member", [
    { name: "member.list", description: "List members" },
    { name: "member.create", description: "Add a member" },
  ]);
  r.register("apikey", [
    { name: "apikey.list", description: "List API keys" },
    { name: "apikey.create", description: "Mint API keys" },
  ]);
  r.register("auth", [
    { name: "auth.tenant.read", description: "Read tenants" },
    { name: "auth.tenant.members.add", description: "Add tenant members" },
    { name: "auth.signup", description: "Sign users up" },
  ]);
  return r;
}

describe("isAllowed", () => {
  type Case = [name: string, policy: Policy, action: string, resource: string | undefined, expected: boolean];
  const cases: Case[] = [
    // empty / trivial
    ["empty policy denies", [], "member.list", undefined, false],
    ["empty policy denies a specific resource", [], "member.list", WS, false],
    ["* / * allows anything", [st(["*"])], "workspace.delete", WS, true],
    ["* / * allows collection level", [st(["*"])], "auth.tenant.members.add", "*", true],
    // exact actions
    ["exact action allowed", [st(["member.list"])], "member.list", undefined, true],
    ["exact action does not allow a sibling", [st(["member.list"])], "member.create", undefined, false],
    ["exact action is not a prefix", [st(["member.list"])], "member.list.all", undefined, false],
    ["action match is case-sensitive", [st(["member.list"])], "Member.list", undefined, false],
    // service.* wildcards
    ["service.* covers its verbs", [st(["member.*"])], "member.create", undefined, true],
    ["service.* does not cover other services", [st(["member.*"])], "workspace.read", undefined, false],
    ["member.* does not cover look-alike members.list", [st(["member.*"])], "members.list", undefined, false],
    ["member.* does not cover bare member", [st(["member.*"])], "member", undefined, false],
    ["auth.* covers depth 3", [st(["auth.*"])], "auth.tenant.read", undefined, true],
    ["auth.* covers depth 4", [st(["auth.*"])], "auth.tenant.members.add", undefined, true],
    ["auth.tenant.* covers depth 4", [st(["auth.tenant.*"])], "auth.tenant.members.add", undefined, true],
    ["auth.tenant.* does not cover auth.signup", [st(["auth.tenant.*"])], "auth.signup", undefined, false],
    ["auth.tenant.* does not cover auth.tenants.read", [st(["auth.tenant.*"])], "auth.tenants.read", undefined, false],
    ["a mid-string * is not a wildcard", [st(["member*"])], "member.list", undefined, false],
    ["*.list is not a wildcard", [st(["*.list"])], "member.list", undefined, false],
    // resources
    ["resources * covers a specific resource", [st(["member.list"], ["*"])], "member.list", WS, true],
    ["exact resource allows itself", [st(["member.list"], [WS])], "member.list", WS, true],
    ["exact resource does not allow another", [st(["member.list"], [WS])], "member.list", WS2, false],
    ["exact resource does not allow a child", [st(["member.list"], [WS])], "member.list", `${WS}/apikey/1`, false],
    ["exact resource does not allow collection *", [st(["member.list"], [WS])], "member.list", "*", false],
    ["default resource is collection *", [st(["member.list"], [WS])], "member.list", undefined, false],
    ["ws/* covers a child", [st(["apikey.list"], [`${WS}/*`])], "apikey.list", `${WS}/apikey/1`, true],
    ["ws/* covers a deep child", [st(["apikey.list"], [`${WS}/*`])], "apikey.list", `${WS}/apikey/1/x`, true],
    ["ws/* does not cover the workspace itself", [st(["apikey.list"], [`${WS}/*`])], "apikey.list", WS, false],
    ["ws/* does not cover another workspace", [st(["apikey.list"], [`${WS}/*`])], "apikey.list", `${WS2}/apikey/1`, false],
    ["ws/* does not cover collection *", [st(["apikey.list"], [`${WS}/*`])], "apikey.list", "*", false],
    ["workspace/1* is a character prefix: workspace/1", [st(["x.y"], ["workspace/1*"])], "x.y", "workspace/1", true],
    ["workspace/1* is a character prefix: workspace/12", [st(["x.y"], ["workspace/1*"])], "x.y", "workspace/12", true],
    ["workspace/1* covers workspace/1/apikey/2", [st(["x.y"], ["workspace/1*"])], "x.y", "workspace/1/apikey/2", true],
    ["workspace/1* does not cover workspace/2", [st(["x.y"], ["workspace/1*"])], "x.y", "workspace/2", false],
    ["workspace/1/* does not cover workspace/12", [st(["x.y"], ["workspace/1/*"])], "x.y", "workspace/12", false],
    ["workspace/* does not cover collection *", [st(["x.y"], ["workspace/*"])], "x.y", "*", false],
    // combinations / multiple statements
    [
      "action from one statement and resource from another do not combine",
      [st(["member.list"], [WS]), st(["member.create"], [WS2])],
      "member.list",
      WS2,
      false,
    ],
    ["second statement allows", [st(["member.list"], [WS]), st(["member.create"], ["*"])], "member.create", WS2, true],
    ["any of several actions in a statement", [st(["workspace.read", "member.list"], [WS])], "member.list", WS, true],
    ["any of several resources in a statement", [st(["member.list"], [WS2, WS])], "member.list", WS, true],
    ["* action with scoped resource", [st(["*"], [`${WS}/*`])], "apikey.create", `${WS}/apikey/3`, true],
    ["* action with scoped resource denies elsewhere", [st(["*"], [`${WS}/*`])], "apikey.create", `${WS2}/apikey/3`, false],
    [
      "non-allow effect is ignored",
      [{ effect: "deny", actions: ["*"], resources: ["*"] } as unknown as Statement],
      "member.list",
      undefined,
      false,
    ],
    ["statement with empty actions grants nothing", [st([], ["*"])], "member.list", undefined, false],
  ];

  test("has at least 30 cases", () => expect(cases.length).toBeGreaterThanOrEqual(30));

  for (const [name, policy, action, resource, expected] of cases) {
    test(name, () => {
      expect(resource === undefined ? isAllowed(policy, action) : isAllowed(policy, action, resource)).toBe(expected);
      // the precompiled form agrees
      const compiled = compilePolicy(policy);
      expect(resource === undefined ? compiled.allows(action) : compiled.allows(action, resource)).toBe(expected);
    });
  }
});

describe("matchers", () => {
  test("actionMatches", () => {
    expect(actionMatches("*", "a.b")).toBe(true);
    expect(actionMatches("a.*", "a.b")).toBe(true);
    expect(actionMatches("a.*", "ab.c")).toBe(false);
    expect(actionMatches("a.*", "a.")).toBe(false);
    expect(actionMatches("a.b", "a.b")).toBe(true);
    // as a covers relation between patterns
    expect(actionMatches("auth.*", "auth.tenant.*")).toBe(true);
    expect(actionMatches("auth.tenant.*", "auth.*")).toBe(false);
    expect(actionMatches("member.list", "member.*")).toBe(false);
    expect(actionMatches("member.*", "*")).toBe(false);
  });
  test("resourceMatches", () => {
    expect(resourceMatches("*", "*")).toBe(true);
    expect(resourceMatches("*", WS)).toBe(true);
    expect(resourceMatches(WS, "*")).toBe(false);
    expect(resourceMatches(`${WS}/*`, `${WS}/a`)).toBe(true);
    expect(resourceMatches(`${WS}/*`, WS)).toBe(false);
    // as a covers relation between patterns
    expect(resourceMatches("workspace/*", `${WS}/*`)).toBe(true);
    expect(resourceMatches(`${WS}/*`, "workspace/*")).toBe(false);
    expect(resourceMatches("workspace/1/*", "workspace/1*")).toBe(false);
    expect(resourceMatches("workspace/1*", "workspace/1/*")).toBe(true);
  });
});

describe("isAllowedByAll", () => {
  const key: Policy = [st(["member.*", "apikey.list"], [`${WS}/*`, WS])];
  const role: Policy = [st(["member.list", "apikey.*"], ["*"])];

  test("allowed only when every policy allows", () => {
    expect(isAllowedByAll([key, role], "member.list", WS)).toBe(true);
    expect(isAllowedByAll([key, role], "apikey.list", `${WS}/apikey/1`)).toBe(true);
  });
  test("key allows but role does not", () => {
    expect(isAllowedByAll([key, role], "member.create", WS)).toBe(false);
  });
  test("role allows but key does not", () => {
    expect(isAllowedByAll([key, role], "apikey.create", WS)).toBe(false);
    expect(isAllowedByAll([key, role], "member.list", WS2)).toBe(false);
  });
  test("role downgraded to empty revokes the key", () => {
    expect(isAllowedByAll([key, []], "member.list", WS)).toBe(false);
  });
  test("a single policy behaves like isAllowed; an empty list denies", () => {
    expect(isAllowedByAll([role], "member.list", WS)).toBe(true);
    expect(isAllowedByAll([], "member.list", WS)).toBe(false);
  });
});

describe("policyCovers", () => {
  type Case = [name: string, outer: Policy, inner: Policy, expected: boolean];
  const cases: Case[] = [
    ["member.*/* covers member.list on a workspace", [st(["member.*"])], [st(["member.list"], ["workspace/1"])], true],
    ["member.* does not cover *", [st(["member.*"])], [st(["*"], ["workspace/1"])], false],
    ["exact member.list does not cover member.*", [st(["member.list"])], [st(["member.*"])], false],
    ["member.* covers member.*", [st(["member.*"])], [st(["member.*"])], true],
    ["auth.* covers auth.tenant.*", [st(["auth.*"])], [st(["auth.tenant.*"])], true],
    ["auth.tenant.* does not cover auth.*", [st(["auth.tenant.*"])], [st(["auth.*"])], false],
    ["* covers anything", [st(["*"])], [st(["*"]), st(["auth.tenant.members.add"], [WS])], true],
    ["anything covers the empty policy", [], [], true],
    ["empty outer covers nothing", [], [st(["member.list"], [WS])], false],
    ["outer scoped to ws/* covers inner child resource", [st(["*"], [`${WS}/*`])], [st(["apikey.list"], [`${WS}/apikey/1`])], true],
    ["outer scoped to ws/* covers inner ws/apikey/*", [st(["*"], [`${WS}/*`])], [st(["apikey.list"], [`${WS}/apikey/*`])], true],
    ["outer ws/* does not cover inner *", [st(["*"], [`${WS}/*`])], [st(["apikey.list"], ["*"])], false],
    ["outer ws/* does not cover inner workspace/*", [st(["*"], [`${WS}/*`])], [st(["apikey.list"], ["workspace/*"])], false],
    ["outer exact resource does not cover inner prefix", [st(["*"], [WS])], [st(["member.list"], [`${WS}*`])], false],
    ["outer workspace/1/* does not cover inner workspace/1*", [st(["*"], ["workspace/1/*"])], [st(["x.y"], ["workspace/1*"])], false],
    ["outer workspace/1* covers inner workspace/1/*", [st(["*"], ["workspace/1*"])], [st(["x.y"], ["workspace/1/*"])], true],
    [
      "pairs may be covered by different outer statements",
      [st(["member.list"], [WS]), st(["apikey.list"], [WS2])],
      [st(["member.list"], [WS]), st(["apikey.list"], [WS2])],
      true,
    ],
    [
      "a pair must be covered by a single outer statement",
      [st(["member.list"], [WS]), st(["apikey.list"], [WS2])],
      [st(["member.list", "apikey.list"], [WS])],
      false,
    ],
    [
      "conservative: a union of exact outer actions does not cover a wildcard",
      [st(["member.list", "member.create"])],
      [st(["member.*"])],
      false,
    ],
    [
      "each action/resource pair checked independently",
      [st(["member.list"], ["*"]), st(["apikey.list"], [WS])],
      [st(["member.list", "apikey.list"], [WS])],
      true,
    ],
    ["outer action mismatch", [st(["member.list"])], [st(["member.create"])], false],
  ];

  for (const [name, outer, inner, expected] of cases) {
    test(name, () => expect(policyCovers(outer, inner)).toBe(expected));
  }

  test("covers implies every concretely allowed request is allowed by outer", () => {
    const reg = registry();
    const resources = ["*", WS, WS2, `${WS}/apikey/1`, "workspace/1", "workspace/12"];
    const pols: Policy[] = cases.flatMap(([, o, i]) => [o, i]);
    for (const outer of pols) {
      for (const inner of pols) {
        if (!policyCovers(outer, inner)) continue;
        for (const { name } of reg.list()) {
          for (const r of resources) {
            if (isAllowed(inner, name, r)) expect(isAllowed(outer, name, r)).toBe(true);
          }
        }
      }
    }
  });
});

describe("validatePolicy", () => {
  function errorOf(input: unknown, reg?: ActionRegistry): ApiError {
    try {
      validatePolicy(input, reg);
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      const err = e as ApiError;
      expect(err.status).toBe(400);
      expect(err.code).toBe("VALIDATION_ERROR");
      return err;
    }
    throw new Error("expected validatePolicy to throw");
  }
  const fields = (input: unknown, reg?: ActionRegistry) => errorOf(input, reg).details!.map((d) => d.field);

  test("accepts and normalizes a valid policy", () => {
    const p = validatePolicy(
      [
        { effect: "allow", actions: ["*"], resources: ["*"] },
        { effect: "allow", actions: ["member.list", "auth.tenant.*"], resources: [WS, `${WS}/*`] },
      ],
      registry(),
    );
    expect(p).toEqual([
      st(["*"], ["*"]),
      st(["member.list", "auth.tenant.*"], [WS, `${WS}/*`]),
    ]);
    expect(validatePolicy([])).toEqual([]);
  });

  test("not an array", () => {
    expect(fields({ effect: "allow" })).toEqual(["policy"]);
    expect(fields(null)).toEqual(["policy"]);
    expect(fields("*")).toEqual(["policy"]);
  });

  test("too many statements", () => {
    const p = Array.from({ length: 51 }, () => st(["member.list"]));
    expect(fields(p)).toEqual(["policy"]);
    expect(validatePolicy(p.slice(0, 50)).length).toBe(50);
  });

  test("statement not an object; unknown key", () => {
    expect(fields([42])).toEqual(["policy[0]"]);
    expect(fields([st(["member.list"]), { ...st(["member.list"]), condition: {} }])).toEqual(["policy[1].condition"]);
  });

  test("effect must be allow", () => {
    expect(fields([{ effect: "deny", actions: ["*"], resources: ["*"] }])).toEqual(["policy[0].effect"]);
    expect(fields([{ actions: ["*"], resources: ["*"] }])).toEqual(["policy[0].effect"]);
  });

  test("empty, missing or oversized lists", () => {
    expect(fields([st([], ["*"])])).toEqual(["policy[0].actions"]);
    expect(fields([st(["*"], [])])).toEqual(["policy[0].resources"]);
    expect(fields([{ effect: "allow", resources: ["*"] }])).toEqual(["policy[0].actions"]);
    expect(fields([{ effect: "allow", actions: "member.list", resources: ["*"] }])).toEqual(["policy[0].actions"]);
    const many = Array.from({ length: 101 }, (_, i) => `workspace/${i}`);
    expect(fields([st(["*"], many)])).toEqual(["policy[0].resources"]);
    expect(validatePolicy([st(["*"], many.slice(0, 100))])[0]!.resources.length).toBe(100);
  });

  test("bad action syntax", () => {
    const bad = ["member", "Member.list", "member*", "*.list", "member.", ".list", "member..list", "member.**", "member.*.list", 7, "", "a".repeat(120) + ".b".repeat(10)];
    const p = [st(["member.list", ...(bad as string[])])];
    expect(fields(p)).toEqual(bad.map((_, j) => `policy[0].actions[${j + 1}]`));
  });

  test("unknown actions with a registry", () => {
    const reg = registry();
    expect(fields([st(["member.list", "member.delete"])], reg)).toEqual(["policy[0].actions[1]"]);
    expect(fields([st(["billing.*"])], reg)).toEqual(["policy[0].actions[0]"]);
    expect(fields([st(["auth.tenant.members.*", "auth.tenant.nope.*"])], reg)).toEqual(["policy[0].actions[1]"]);
    // "*" is always fine; without a registry only syntax is checked
    expect(validatePolicy([st(["*", "auth.*"])], reg).length).toBe(1);
    expect(validatePolicy([st(["member.delete", "billing.*"])]).length).toBe(1);
  });

  test("bad resources", () => {
    const p = [st(["*"], ["*", 5 as unknown as string, "", "x".repeat(257), "workspace/*/apikey", "workspace/ a", "*/x"])];
    expect(fields(p)).toEqual([1, 2, 3, 4, 5, 6].map((j) => `policy[0].resources[${j}]`));
    expect(validatePolicy([st(["*"], ["x".repeat(256)])]).length).toBe(1);
  });

  test("reports every problem across statements, with a custom root field", () => {
    try {
      validatePolicy([st(["ok.yes"]), { effect: "nope", actions: ["BAD"], resources: [] }], undefined, "policies[2]");
      throw new Error("unreachable");
    } catch (e) {
      expect((e as ApiError).details!.map((d) => d.field)).toEqual([
        "policies[2][1].effect",
        "policies[2][1].actions[0]",
        "policies[2][1].resources",
      ]);
      expect((e as ApiError).toBody().error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("single problem message names the field", () => {
    expect(errorOf([st(["member.list"], [""])]).message).toContain("policy[0].resources[0]");
  });
});

describe("ActionRegistry", () => {
  test("register, has, list", () => {
    const reg = registry();
    expect(reg.has("member.list")).toBe(true);
    expect(reg.has("member.delete")).toBe(false);
    expect(reg.has("member.*")).toBe(false);
    const l = reg.list();
    expect(l.length).toBe(10);
    expect(l.find((a) => a.name === "auth.tenant.read")).toEqual({ service: "auth", name: "auth.tenant.read", description: "Read tenants" });
    expect(l.map((a) => a.name)).toEqual([...l.map((a) => a.name)].sort());
  });

  test("registering again for the same service adds", () => {
    const reg = registry();
    reg.register("member", [{ name: "member.delete", description: "Remove a member" }]);
    expect(reg.has("member.delete")).toBe(true);
  });

  test("instances are independent", () => {
    const a = new ActionRegistry();
    const b = new ActionRegistry();
    a.register("x", [{ name: "x.y", description: "" }]);
    expect(b.has("x.y")).toBe(false);
  });

  test("rejects duplicates, foreign prefixes and bad names without partial registration", () => {
    const reg = registry();
    expect(() => reg.register("member", [{ name: "member.list", description: "again" }])).toThrow(/duplicate/);
    expect(() =>
      reg.register("member", [
        { name: "member.update", description: "" },
        { name: "member.update", description: "" },
      ]),
    ).toThrow(/duplicate/);
    expect(reg.has("member.update")).toBe(false);
    expect(() => reg.register("member", [{ name: "workspace.purge", description: "" }])).toThrow(/prefix/);
    expect(() => reg.register("member", [{ name: "members.list", description: "" }])).toThrow(/prefix/);
    expect(() => reg.register("member", [{ name: "member", description: "" }])).toThrow(/invalid/);
    expect(() => reg.register("member", [{ name: "member.List", description: "" }])).toThrow(/invalid/);
    expect(() => reg.register("member", [{ name: "member.*", description: "" }])).toThrow(/invalid/);
    expect(() => reg.register("Bad", [{ name: "bad.x", description: "" }])).toThrow(/service/);
    expect(() => reg.register("a.b", [{ name: "a.b.c", description: "" }])).toThrow(/service/);
  });

  test("matching", () => {
    const reg = registry();
    expect(reg.matching("*").length).toBe(10);
    expect(reg.matching("member.*")).toEqual(["member.create", "member.list"]);
    expect(reg.matching("auth.*")).toEqual(["auth.signup", "auth.tenant.members.add", "auth.tenant.read"]);
    expect(reg.matching("auth.tenant.*")).toEqual(["auth.tenant.members.add", "auth.tenant.read"]);
    expect(reg.matching("member.list")).toEqual(["member.list"]);
    expect(reg.matching("member.delete")).toEqual([]);
    expect(reg.matching("mem.*")).toEqual([]);
  });
});

describe("effectiveActions", () => {
  test("concrete registered actions allowed on *", () => {
    const reg = registry();
    expect(effectiveActions([st(["*"])], reg).length).toBe(10);
    expect(effectiveActions([st(["member.*", "auth.tenant.read"]), st(["workspace.delete"], [WS])], reg)).toEqual([
      "auth.tenant.read",
      "member.create",
      "member.list",
    ]);
    expect(effectiveActions([], reg)).toEqual([]);
  });
});

describe("performance", () => {
  test("isAllowed is cheap", () => {
    const policy: Policy = [
      st(["workspace.read", "member.list", "apikey.list"], [`${WS}/*`, WS]),
      st(["auth.tenant.*"], ["*"]),
    ];
    const n = 200_000;
    const t0 = performance.now();
    let hits = 0;
    for (let i = 0; i < n; i++) {
      if (isAllowed(policy, "auth.tenant.members.add", WS)) hits++;
      if (isAllowed(policy, "member.create", WS2)) hits++;
    }
    const ms = performance.now() - t0;
    expect(hits).toBe(n);
    expect(ms).toBeLessThan(1000); // ~10x headroom on a slow CI box
  });
});
