/** The release this build is: /healthz, the OpenAPI documents, `bunker version`, backups. */
export const VERSION = "0.1.0";
