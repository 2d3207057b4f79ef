//! The conformance defects of the messages, the lists and the HTTP layer: one broken rule
//! of the built-in conformance packs each.

use crate::defects::{DefectInfo, Scope};

/// Results, `_meta`, errors, versions, lists and schemas.
pub(super) const MESSAGES: &[DefectInfo] = &[
    DefectInfo {
        name: "no-result-type",
        value: None,
        scope: Scope::Any,
        description: "modern results lack `resultType`",
    },
    DefectInfo {
        name: "no-cache-hints",
        value: None,
        scope: Scope::Any,
        description: "modern cacheable results lack `ttlMs` and `cacheScope`",
    },
    DefectInfo {
        name: "no-server-info-meta",
        value: None,
        scope: Scope::Any,
        description: "modern results lack `_meta[\"io.modelcontextprotocol/serverInfo\"]`",
    },
    DefectInfo {
        name: "no-server-info",
        value: None,
        scope: Scope::Any,
        description: "the initialize result lacks `serverInfo`",
    },
    DefectInfo {
        name: "no-capabilities",
        value: None,
        scope: Scope::Any,
        description: "the initialize and server/discover results lack `capabilities`",
    },
    DefectInfo {
        name: "bad-counter-offer",
        value: None,
        scope: Scope::Any,
        description: "initialize answers an unsupported offered revision with that revision",
    },
    DefectInfo {
        name: "error-wrong-id",
        value: None,
        scope: Scope::Any,
        description: "error responses carry another id (number+1000 or \"wrong-<id>\")",
    },
    DefectInfo {
        name: "rewrite-error-code",
        value: Some("FROM:TO"),
        scope: Scope::Any,
        description: "JSON-RPC errors with code FROM carry code TO",
    },
    DefectInfo {
        name: "resource-not-found-empty",
        value: None,
        scope: Scope::Any,
        description: "resources/read of an unknown URI returns empty `contents`, not an error",
    },
    DefectInfo {
        name: "accept-unsupported-version",
        value: None,
        scope: Scope::Any,
        description: "modern requests with an unknown protocolVersion are served as 2026-07-28",
    },
    DefectInfo {
        name: "accept-missing-client-capabilities",
        value: None,
        scope: Scope::Any,
        description: "modern requests without `_meta` clientCapabilities are served",
    },
    DefectInfo {
        name: "require-client-info",
        value: None,
        scope: Scope::Any,
        description: "modern requests without `_meta` clientInfo are rejected (-32602)",
    },
    DefectInfo {
        name: "no-ping",
        value: None,
        scope: Scope::Any,
        description: "ping answers -32601",
    },
    DefectInfo {
        name: "unknown-tool-is-error",
        value: None,
        scope: Scope::Any,
        description: "tools/call of an unknown tool returns a result with isError: true",
    },
    DefectInfo {
        name: "unknown-method-invalid-request",
        value: None,
        scope: Scope::Any,
        description: "an unknown method answers -32600 instead of -32601",
    },
    DefectInfo {
        name: "unstable-tool-order",
        value: None,
        scope: Scope::Any,
        description: "every tools/list rotates the tool order by one",
    },
    DefectInfo {
        name: "tools-vary-by-connection",
        value: None,
        scope: Scope::Stdio,
        description: "tools/list also lists a tool named after this process (one per connection)",
    },
    DefectInfo {
        name: "description-varies-by-connection",
        value: None,
        scope: Scope::Stdio,
        description: "each tool's description ends with this process's id: the text differs on every start, the set of tools does not (no defect under the 2026-07-28 rule, which is about the set)",
    },
    DefectInfo {
        name: "mixed-cache-scope",
        value: None,
        scope: Scope::Any,
        description: "list pages after the first carry cacheScope private (with --page-size)",
    },
    DefectInfo {
        name: "undeclared-capability",
        value: Some("tools|prompts|resources"),
        scope: Scope::Any,
        description: "the capability is not declared, but its methods are still served",
    },
    DefectInfo {
        name: "unserved-capability",
        value: Some("tools|prompts|resources"),
        scope: Scope::Any,
        description: "the capability is declared, but its methods answer -32601",
    },
    DefectInfo {
        name: "bad-tool-name",
        value: None,
        scope: Scope::Any,
        description: "tools/list also lists a tool named `get weather,v2`",
    },
    DefectInfo {
        name: "duplicate-tool-name",
        value: None,
        scope: Scope::Any,
        description: "tools/list lists `echo` twice",
    },
    DefectInfo {
        name: "invalid-input-schema",
        value: None,
        scope: Scope::Any,
        description: "tools/list also lists a tool whose inputSchema is no valid JSON Schema",
    },
    DefectInfo {
        name: "input-schema-not-object",
        value: None,
        scope: Scope::Any,
        description: "tools/list also lists a tool whose inputSchema has root type array",
    },
    DefectInfo {
        name: "invalid-output-schema",
        value: None,
        scope: Scope::Any,
        description: "tools/list also lists a tool whose outputSchema is no valid JSON Schema",
    },
    DefectInfo {
        name: "output-schema-not-object",
        value: None,
        scope: Scope::Any,
        description: "tools/list also lists a tool whose outputSchema has root type string",
    },
    DefectInfo {
        name: "ignore-invalid-cursor",
        value: None,
        scope: Scope::Any,
        description: "an invalid cursor returns the first page instead of -32602",
    },
    DefectInfo {
        name: "declare-logging",
        value: None,
        scope: Scope::Any,
        description: "declares the deprecated `logging` capability",
    },
];

/// HTTP headers, sessions and origins, the wire types, sign-in.
pub(super) const HTTP: &[DefectInfo] = &[
    DefectInfo {
        name: "lenient-header",
        value: Some("version|method|name"),
        scope: Scope::Http,
        description: "MCP-Protocol-Version / Mcp-Method / Mcp-Name is taken from the body, never checked",
    },
    DefectInfo {
        name: "error-http-200",
        value: Some("CODE"),
        scope: Scope::Http,
        description: "modern JSON-RPC errors with this code get HTTP 200 (not 400/404)",
    },
    DefectInfo {
        name: "mint-session-id",
        value: None,
        scope: Scope::Http,
        description: "modern responses carry an `Mcp-Session-Id` header",
    },
    DefectInfo {
        name: "answer-notifications",
        value: None,
        scope: Scope::Any,
        description: "notifications get a JSON-RPC error reply (HTTP: 200 with it instead of 202; stdio: a line, except for notifications/initialized)",
    },
    DefectInfo {
        name: "session-id-with-space",
        value: None,
        scope: Scope::Http,
        description: "the legacy `Mcp-Session-Id` contains a space (not visible ASCII)",
    },
    DefectInfo {
        name: "allow-any-origin",
        value: None,
        scope: Scope::Http,
        description: "the `Origin` header is not validated (no 403 for foreign origins)",
    },
    DefectInfo {
        name: "origin-refused-400",
        value: None,
        scope: Scope::Http,
        description: "a foreign `Origin` is refused with 400, not 403 (the status 2025-11-25 names; earlier revisions name none)",
    },
    DefectInfo {
        name: "wire-tools-missing-input-schema",
        value: None,
        scope: Scope::Any,
        description: "the first tool of tools/list has no `inputSchema` (a required field)",
    },
    DefectInfo {
        name: "wire-list-item-missing-name",
        value: None,
        scope: Scope::Any,
        description: "the first item of prompts/list, resources/list and resources/templates/list has no `name`",
    },
    DefectInfo {
        name: "wire-wrong-type-content",
        value: None,
        scope: Scope::Any,
        description: "tools/call results carry `content` as a string, not an array of content blocks",
    },
    DefectInfo {
        name: "wire-error-code-string",
        value: None,
        scope: Scope::Any,
        description: "JSON-RPC errors carry their `code` as a string (\"-32601\"), not an integer",
    },
    DefectInfo {
        name: "allow-foreign-host",
        value: None,
        scope: Scope::Http,
        description: "the `Host` header is not validated (DNS rebinding: foreign hosts are served)",
    },
    DefectInfo {
        name: "auth-any-token",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwt-secret: any `Authorization` header is accepted",
    },
    DefectInfo {
        name: "auth-ignore-audience",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwt-secret: a token for another audience (`aud`) is accepted",
    },
    DefectInfo {
        name: "auth-ignore-expiry",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwt-secret: an expired token (`exp` in the past) is accepted",
    },
    DefectInfo {
        name: "auth-alg-none",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwt-secret: an unsigned `alg: none` token is accepted",
    },
    DefectInfo {
        name: "auth-no-challenge",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwt-secret: 401 without a `WWW-Authenticate` challenge",
    },
    DefectInfo {
        name: "auth-no-resource-metadata",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwt-secret: the challenge has no `resource_metadata`",
    },
    DefectInfo {
        name: "auth-metadata-off-well-known",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwks: the protected-resource metadata is served only at the path the challenge names, not at its well-known URI",
    },
    DefectInfo {
        name: "auth-server-no-pkce",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwks: the metadata names the server itself as authorization server, re-serving the real one's metadata with `code_challenge_methods_supported: [plain]` (no S256)",
    },
    DefectInfo {
        name: "auth-server-incomplete",
        value: None,
        scope: Scope::Http,
        description: "with --auth-jwks: the metadata names the server itself as authorization server, re-serving the real one's metadata without `response_types_supported`",
    },
    DefectInfo {
        name: "auth-scope-401",
        value: None,
        scope: Scope::Http,
        description: "with --auth-scope: a token without the scope gets 401 `invalid_token`, not 403 `insufficient_scope` with the scope needed",
    },
    DefectInfo {
        name: "auth-query-token",
        value: None,
        scope: Scope::Http,
        description: "a token in the query string (`?access_token=`) is accepted when no `Authorization` header is sent",
    },
];
