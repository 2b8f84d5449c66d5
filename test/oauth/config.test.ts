/** Console provider settings and the return_to allowlist as read from the environment. */
import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";

const base = { DATA_DIR: "/tmp/bunker-config-test", LOG_LEVEL: "silent" };

test("IDP_<n>_* are read per provider; unset providers are absent", () => {
  const c = loadConfig({ ...base, IDP_1_ISSUER: "https://appleid.apple.com", IDP_1_CLIENT_ID: "com.acme.web", IDP_1_CLIENT_SECRET: "s1", IDP_3_ISSUER: "https://sso.acme.com/realms/acme", IDP_3_CLIENT_ID: "acme", IDP_3_CLIENT_SECRET: "s3" });
  expect(c.oidcProviders).toEqual({
    idp_1: { issuer: "https://appleid.apple.com", clientId: "com.acme.web", clientSecret: "s1" },
    idp_3: { issuer: "https://sso.acme.com/realms/acme", clientId: "acme", clientSecret: "s3" },
  });
  expect(loadConfig(base).oidcProviders).toEqual({});
});

test("a provider needs all three variables and an http(s) issuer without query", () => {
  expect(() => loadConfig({ ...base, IDP_2_ISSUER: "https://accounts.google.com", IDP_2_CLIENT_ID: "x" })).toThrow(ConfigError);
  expect(() => loadConfig({ ...base, IDP_2_ISSUER: "https://accounts.google.com" })).toThrow("IDP_2_ISSUER, IDP_2_CLIENT_ID, IDP_2_CLIENT_SECRET go together");
  expect(() => loadConfig({ ...base, IDP_2_ISSUER: "ftp://x", IDP_2_CLIENT_ID: "x", IDP_2_CLIENT_SECRET: "y" })).toThrow("IDP_2_ISSUER");
  expect(() => loadConfig({ ...base, IDP_2_ISSUER: "https://x.com/?a=1", IDP_2_CLIENT_ID: "x", IDP_2_CLIENT_SECRET: "y" })).toThrow("IDP_2_ISSUER");
});

test("OAUTH_RETURN_TO_ORIGINS: origins and one-label wildcards; paths and over-broad wildcards refused", () => {
  expect(loadConfig({ ...base, OAUTH_RETURN_TO_ORIGINS: "https://a.example.com, https://*.example.com,http://localhost:3000" }).oauthReturnToOrigins).toEqual([
    "https://a.example.com",
    "https://*.example.com",
    "http://localhost:3000",
  ]);
  for (const bad of ["https://*.com", "https://a.example.com/path", "ftp://a.example.com", "https://*.*.example.com", "https://user@a.example.com"]) {
    expect(() => loadConfig({ ...base, OAUTH_RETURN_TO_ORIGINS: bad })).toThrow("OAUTH_RETURN_TO_ORIGINS");
  }
});
