//! Every defect's name, scope and description (`--help`, `--defect NAME`), and how a
//! flag's text becomes a [`Defect`].

use super::*;

impl Defect {
    pub const CATALOG: &'static [DefectInfo] = &[
        DefectInfo {
            name: "crash-on-call",
            value: None,
            scope: Scope::Any,
            description: "any tools/call exits the process (code 3) without replying",
        },
        DefectInfo {
            name: "hang-on-call",
            value: None,
            scope: Scope::Any,
            description: "tools/call never replies; other requests still work",
        },
        DefectInfo {
            name: "garbage-stdout",
            value: None,
            scope: Scope::Stdio,
            description: "write the non-JSON line `DEBUG: handling request` before every stdout line",
        },
        DefectInfo {
            name: "wrong-id",
            value: None,
            scope: Scope::Any,
            description: "responses to tools/call carry another id (number+1000 or \"wrong-<id>\")",
        },
        DefectInfo {
            name: "oversized-reply",
            value: None,
            scope: Scope::Any,
            description: "tools/call returns a 40 MiB text content",
        },
        DefectInfo {
            name: "exit-at-start",
            value: None,
            scope: Scope::Any,
            description: "print `fatal: config file missing` to stderr and exit 1 before serving",
        },
        DefectInfo {
            name: "require-token",
            value: Some("TOKEN"),
            scope: Scope::Http,
            description: "requests without `Authorization: Bearer TOKEN` get 401 + WWW-Authenticate",
        },
        // Conformance defects (one broken rule of the built-in conformance packs each).
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
            name: "crash-on-wrong-type",
            value: None,
            scope: Scope::Any,
            description: "a tools/call argument of the wrong JSON type exits the process",
        },
        DefectInfo {
            name: "hang-on-oversized",
            value: None,
            scope: Scope::Any,
            description: "a tools/call string argument over 10000 characters never gets an answer",
        },
        DefectInfo {
            name: "ignore-input-schema",
            value: None,
            scope: Scope::Any,
            description: "tools/call arguments the inputSchema rejects get a successful result",
        },
        DefectInfo {
            name: "validation-protocol-error",
            value: None,
            scope: Scope::Any,
            description: "tools/call arguments the inputSchema rejects get -32602, not isError (SEP-1303)",
        },
        DefectInfo {
            name: "structured-content-mismatch",
            value: None,
            scope: Scope::Any,
            description: "numbers in structuredContent become strings (violates the outputSchema)",
        },
        DefectInfo {
            name: "no-structured-text",
            value: None,
            scope: Scope::Any,
            description: "structured tool results carry no text block with the serialized JSON",
        },
        DefectInfo {
            name: "sequential-handles",
            value: None,
            scope: Scope::Any,
            description: "create_note returns ids note-1, note-2, … instead of random ones",
        },
        DefectInfo {
            name: "injected-description",
            value: Some("KIND"),
            scope: Scope::Any,
            description: "echo's description carries text addressed to the model (override, tags, hidden-unicode, exfiltration-url, exfiltration-secrets, html-comment, hidden-css)",
        },
        DefectInfo {
            name: "injected-result",
            value: None,
            scope: Scope::Any,
            description: "echo's result carries a hidden instruction to the model",
        },
        DefectInfo {
            name: "unbound-handles",
            value: None,
            scope: Scope::Http,
            description: "with --auth-tokens, any user can read any user's note (note://ID)",
        },
        DefectInfo {
            name: "answer-removed-methods",
            value: None,
            scope: Scope::Any,
            description: "initialize, ping, logging/setLevel, resources/(un)subscribe refused with an error get an empty result (with --change drop-legacy)",
        },
        DefectInfo {
            name: "serve-legacy-http",
            value: None,
            scope: Scope::Http,
            description: "modern-only (--change drop-legacy): GET/DELETE get 200, initialize mints an Mcp-Session-Id",
        },
        DefectInfo {
            name: "session-optional",
            value: None,
            scope: Scope::Http,
            description: "legacy requests without Mcp-Session-Id are served on the latest session (no 400)",
        },
        DefectInfo {
            name: "terminated-session-400",
            value: None,
            scope: Scope::Http,
            description: "requests on a terminated (DELETEd) legacy session get 400 instead of 404",
        },
        DefectInfo {
            name: "server-request",
            value: Some("sampling|roots|include-context"),
            scope: Scope::Stdio,
            description: "after its first response, the server sends sampling/createMessage (includeContext thisServer) or roots/list",
        },
        DefectInfo {
            name: "legacy-sse-endpoint",
            value: None,
            scope: Scope::Http,
            description: "GET on the endpoint opens an HTTP+SSE stream whose first event is `endpoint`",
        },
        DefectInfo {
            name: "dynamic-client-registration",
            value: None,
            scope: Scope::Http,
            description: "serves /.well-known/oauth-authorization-server with a registration_endpoint",
        },
        DefectInfo {
            name: "close-after-response",
            value: None,
            scope: Scope::Http,
            description: "closes each TCP connection after its first response, without `Connection: close`",
        },
        DefectInfo {
            name: "legacy-only",
            value: None,
            scope: Scope::Any,
            description: "a legacy-only server: server/discover is an unknown method (-32601)",
        },
        DefectInfo {
            name: "host-421",
            value: None,
            scope: Scope::Http,
            description: "a foreign `Host` gets 421 Misdirected Request (as the Python SDK answers): a conformant refusal, not a defect of the rule",
        },
        DefectInfo {
            name: "initialize-invalid-params",
            value: None,
            scope: Scope::Any,
            description: "with --change drop-legacy: initialize is refused with -32602 (as a server that validates _meta first): conformant, but not the suggested -32601/-32022",
        },
        DefectInfo {
            name: "error-id-null",
            value: None,
            scope: Scope::Any,
            description: "JSON-RPC error responses carry `id: null` although the request's id was readable",
        },
        DefectInfo {
            name: "leak-secret",
            value: Some("VALUE|env:VAR"),
            scope: Scope::Any,
            description: "the server shows VALUE (or the variable VAR's value: a credential) back: in echo's description and the instructions; echo `leak:result|error|shapes` answers with it after padding (so a cut falls inside it), `leak:stdout` writes it on a non-JSON stdout line, `leak:http500` answers HTTP 500 with it in the body, `leak:stderr` writes ESC/OSC/NUL bytes to stderr",
        },
        DefectInfo {
            name: "progress-wrong-token",
            value: None,
            scope: Scope::Any,
            description: "notifications/progress carry another token than the request's progressToken",
        },
        DefectInfo {
            name: "log-without-level",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: modern requests without logLevel in _meta get log messages (notifications/message) too",
        },
        DefectInfo {
            name: "log-level-ignored",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: log messages below the requested level (logLevel / logging/setLevel) are sent too",
        },
        DefectInfo {
            name: "completion-over-limit",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: completion/complete returns 150 values (more than 100)",
        },
        DefectInfo {
            name: "missing-capability-old-code",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: the `confirm` tool refuses a client without elicitation with the old draft code -32003, not -32021",
        },
        DefectInfo {
            name: "input-required-empty",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: the `confirm` tool's input_required result has neither inputRequests nor requestState",
        },
        DefectInfo {
            name: "input-required-unanswered",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: a `confirm` retry that echoes the requestState without inputResponses completes (declined) instead of asking again",
        },
        DefectInfo {
            name: "subscribe-refused",
            value: None,
            scope: Scope::Any,
            description: "with --utilities (declares resources.subscribe): resources/subscribe and unsubscribe answer -32601",
        },
        DefectInfo {
            name: "unrequested-list-changed",
            value: None,
            scope: Scope::Any,
            description: "with --utilities (declares listChanged): modern tools/list, prompts/list and resources/list replies come with their list_changed notification, which the client did not subscribe to",
        },
        DefectInfo {
            name: "set-level-refused",
            value: None,
            scope: Scope::Any,
            description: "with --utilities (declares logging): logging/setLevel answers -32601",
        },
        DefectInfo {
            name: "slow-read-tool",
            value: Some("SECONDS"),
            scope: Scope::Any,
            description: "the read-only `slow` tool sleeps at least SECONDS whatever its `ms` (a slow tool)",
        },
        DefectInfo {
            name: "listen-no-ack",
            value: None,
            scope: Scope::Stdio,
            description: "with --utilities: subscriptions/listen is never acknowledged (no notifications/subscriptions/acknowledged)",
        },
        DefectInfo {
            name: "listen-unrequested",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: every listen subscription gets tools/list_changed when `toggle_tool` runs, whatever its filter asked for",
        },
        DefectInfo {
            name: "listen-ignores-cancel",
            value: None,
            scope: Scope::Stdio,
            description: "with --utilities: a listen subscription cancelled by notifications/cancelled keeps getting list_changed",
        },
        DefectInfo {
            name: "list-changed-never-sent",
            value: None,
            scope: Scope::Any,
            description: "with --utilities (declares tools.listChanged): `toggle_tool` changes the tools list but no list_changed is ever sent (legacy session or listen stream)",
        },
        DefectInfo {
            name: "progress-decreasing",
            value: None,
            scope: Scope::Any,
            description: "progress notifications count down (2, then 1) instead of strictly increasing",
        },
        DefectInfo {
            name: "listen-no-subscription-id",
            value: None,
            scope: Scope::Any,
            description: "with --utilities: the list_changed a listen subscription gets carries no _meta io.modelcontextprotocol/subscriptionId",
        },
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Defect::CrashOnCall => "crash-on-call",
            Defect::HangOnCall => "hang-on-call",
            Defect::GarbageStdout => "garbage-stdout",
            Defect::WrongId => "wrong-id",
            Defect::OversizedReply => "oversized-reply",
            Defect::ExitAtStart => "exit-at-start",
            Defect::RequireToken(_) => "require-token",
            Defect::NoResultType => "no-result-type",
            Defect::NoCacheHints => "no-cache-hints",
            Defect::NoServerInfoMeta => "no-server-info-meta",
            Defect::NoServerInfo => "no-server-info",
            Defect::NoCapabilities => "no-capabilities",
            Defect::BadCounterOffer => "bad-counter-offer",
            Defect::ErrorWrongId => "error-wrong-id",
            Defect::RewriteErrorCode(..) => "rewrite-error-code",
            Defect::ResourceNotFoundEmpty => "resource-not-found-empty",
            Defect::AcceptUnsupportedVersion => "accept-unsupported-version",
            Defect::AcceptMissingClientCapabilities => "accept-missing-client-capabilities",
            Defect::RequireClientInfo => "require-client-info",
            Defect::NoPing => "no-ping",
            Defect::UnknownToolIsError => "unknown-tool-is-error",
            Defect::UnknownMethodInvalidRequest => "unknown-method-invalid-request",
            Defect::UnstableToolOrder => "unstable-tool-order",
            Defect::ToolsVaryByConnection => "tools-vary-by-connection",
            Defect::DescriptionVariesByConnection => "description-varies-by-connection",
            Defect::MixedCacheScope => "mixed-cache-scope",
            Defect::UndeclaredCapability(_) => "undeclared-capability",
            Defect::UnservedCapability(_) => "unserved-capability",
            Defect::BadToolName => "bad-tool-name",
            Defect::DuplicateToolName => "duplicate-tool-name",
            Defect::InvalidInputSchema => "invalid-input-schema",
            Defect::InputSchemaNotObject => "input-schema-not-object",
            Defect::InvalidOutputSchema => "invalid-output-schema",
            Defect::OutputSchemaNotObject => "output-schema-not-object",
            Defect::IgnoreInvalidCursor => "ignore-invalid-cursor",
            Defect::DeclareLogging => "declare-logging",
            Defect::LenientHeader(_) => "lenient-header",
            Defect::ErrorHttp200(_) => "error-http-200",
            Defect::MintSessionId => "mint-session-id",
            Defect::AnswerNotifications => "answer-notifications",
            Defect::SessionIdWithSpace => "session-id-with-space",
            Defect::AllowAnyOrigin => "allow-any-origin",
            Defect::WireToolsMissingInputSchema => "wire-tools-missing-input-schema",
            Defect::WireListItemMissingName => "wire-list-item-missing-name",
            Defect::WireWrongTypeContent => "wire-wrong-type-content",
            Defect::WireErrorCodeString => "wire-error-code-string",
            Defect::AllowForeignHost => "allow-foreign-host",
            Defect::AuthAnyToken => "auth-any-token",
            Defect::AuthIgnoreAudience => "auth-ignore-audience",
            Defect::AuthIgnoreExpiry => "auth-ignore-expiry",
            Defect::AuthAlgNone => "auth-alg-none",
            Defect::AuthNoChallenge => "auth-no-challenge",
            Defect::AuthNoResourceMetadata => "auth-no-resource-metadata",
            Defect::CrashOnWrongType => "crash-on-wrong-type",
            Defect::HangOnOversized => "hang-on-oversized",
            Defect::IgnoreInputSchema => "ignore-input-schema",
            Defect::ValidationProtocolError => "validation-protocol-error",
            Defect::StructuredContentMismatch => "structured-content-mismatch",
            Defect::NoStructuredText => "no-structured-text",
            Defect::SequentialHandles => "sequential-handles",
            Defect::InjectedDescription(_) => "injected-description",
            Defect::InjectedResult => "injected-result",
            Defect::UnboundHandles => "unbound-handles",
            Defect::AnswerRemovedMethods => "answer-removed-methods",
            Defect::ServeLegacyHttp => "serve-legacy-http",
            Defect::SessionOptional => "session-optional",
            Defect::TerminatedSession400 => "terminated-session-400",
            Defect::ServerRequest(_) => "server-request",
            Defect::LegacySseEndpoint => "legacy-sse-endpoint",
            Defect::DynamicClientRegistration => "dynamic-client-registration",
            Defect::CloseAfterResponse => "close-after-response",
            Defect::LegacyOnly => "legacy-only",
            Defect::Host421 => "host-421",
            Defect::InitializeInvalidParams => "initialize-invalid-params",
            Defect::ErrorIdNull => "error-id-null",
            Defect::LeakSecret(_) => "leak-secret",
            Defect::ProgressWrongToken => "progress-wrong-token",
            Defect::LogWithoutLevel => "log-without-level",
            Defect::LogLevelIgnored => "log-level-ignored",
            Defect::CompletionOverLimit => "completion-over-limit",
            Defect::MissingCapabilityOldCode => "missing-capability-old-code",
            Defect::InputRequiredEmpty => "input-required-empty",
            Defect::InputRequiredUnanswered => "input-required-unanswered",
            Defect::SubscribeRefused => "subscribe-refused",
            Defect::UnrequestedListChanged => "unrequested-list-changed",
            Defect::SetLevelRefused => "set-level-refused",
            Defect::SlowReadTool(_) => "slow-read-tool",
            Defect::ListenNoAck => "listen-no-ack",
            Defect::ListenUnrequested => "listen-unrequested",
            Defect::ListenIgnoresCancel => "listen-ignores-cancel",
            Defect::ListChangedNeverSent => "list-changed-never-sent",
            Defect::ProgressDecreasing => "progress-decreasing",
            Defect::ListenNoSubscriptionId => "listen-no-subscription-id",
        }
    }

    /// The defect named `name`; `value` is present exactly when the catalog wants one.
    fn from_name(name: &str, value: Option<&str>) -> Result<Self, String> {
        let value = || value.ok_or_else(|| format!("defect `{name}` needs a value"));
        Ok(match name {
            "crash-on-call" => Defect::CrashOnCall,
            "hang-on-call" => Defect::HangOnCall,
            "garbage-stdout" => Defect::GarbageStdout,
            "wrong-id" => Defect::WrongId,
            "oversized-reply" => Defect::OversizedReply,
            "exit-at-start" => Defect::ExitAtStart,
            "require-token" => Defect::RequireToken(value()?.to_owned()),
            "no-result-type" => Defect::NoResultType,
            "no-cache-hints" => Defect::NoCacheHints,
            "no-server-info-meta" => Defect::NoServerInfoMeta,
            "no-server-info" => Defect::NoServerInfo,
            "no-capabilities" => Defect::NoCapabilities,
            "bad-counter-offer" => Defect::BadCounterOffer,
            "error-wrong-id" => Defect::ErrorWrongId,
            "rewrite-error-code" => {
                let value = value()?;
                let (from, to) = value
                    .split_once(':')
                    .ok_or_else(|| format!("`{value}`: expected FROM:TO, e.g. -32602:-32002"))?;
                Defect::RewriteErrorCode(parse_code(from)?, parse_code(to)?)
            }
            "resource-not-found-empty" => Defect::ResourceNotFoundEmpty,
            "accept-unsupported-version" => Defect::AcceptUnsupportedVersion,
            "accept-missing-client-capabilities" => Defect::AcceptMissingClientCapabilities,
            "require-client-info" => Defect::RequireClientInfo,
            "no-ping" => Defect::NoPing,
            "unknown-tool-is-error" => Defect::UnknownToolIsError,
            "unknown-method-invalid-request" => Defect::UnknownMethodInvalidRequest,
            "unstable-tool-order" => Defect::UnstableToolOrder,
            "tools-vary-by-connection" => Defect::ToolsVaryByConnection,
            "description-varies-by-connection" => Defect::DescriptionVariesByConnection,
            "mixed-cache-scope" => Defect::MixedCacheScope,
            "undeclared-capability" => Defect::UndeclaredCapability(value()?.parse()?),
            "unserved-capability" => Defect::UnservedCapability(value()?.parse()?),
            "bad-tool-name" => Defect::BadToolName,
            "duplicate-tool-name" => Defect::DuplicateToolName,
            "invalid-input-schema" => Defect::InvalidInputSchema,
            "input-schema-not-object" => Defect::InputSchemaNotObject,
            "invalid-output-schema" => Defect::InvalidOutputSchema,
            "output-schema-not-object" => Defect::OutputSchemaNotObject,
            "ignore-invalid-cursor" => Defect::IgnoreInvalidCursor,
            "declare-logging" => Defect::DeclareLogging,
            "lenient-header" => Defect::LenientHeader(value()?.parse()?),
            "error-http-200" => Defect::ErrorHttp200(parse_code(value()?)?),
            "mint-session-id" => Defect::MintSessionId,
            "answer-notifications" => Defect::AnswerNotifications,
            "session-id-with-space" => Defect::SessionIdWithSpace,
            "allow-any-origin" => Defect::AllowAnyOrigin,
            "wire-tools-missing-input-schema" => Defect::WireToolsMissingInputSchema,
            "wire-list-item-missing-name" => Defect::WireListItemMissingName,
            "wire-wrong-type-content" => Defect::WireWrongTypeContent,
            "wire-error-code-string" => Defect::WireErrorCodeString,
            "allow-foreign-host" => Defect::AllowForeignHost,
            "auth-any-token" => Defect::AuthAnyToken,
            "auth-ignore-audience" => Defect::AuthIgnoreAudience,
            "auth-ignore-expiry" => Defect::AuthIgnoreExpiry,
            "auth-alg-none" => Defect::AuthAlgNone,
            "auth-no-challenge" => Defect::AuthNoChallenge,
            "auth-no-resource-metadata" => Defect::AuthNoResourceMetadata,
            "crash-on-wrong-type" => Defect::CrashOnWrongType,
            "hang-on-oversized" => Defect::HangOnOversized,
            "ignore-input-schema" => Defect::IgnoreInputSchema,
            "validation-protocol-error" => Defect::ValidationProtocolError,
            "structured-content-mismatch" => Defect::StructuredContentMismatch,
            "no-structured-text" => Defect::NoStructuredText,
            "sequential-handles" => Defect::SequentialHandles,
            "injected-description" => Defect::InjectedDescription(value()?.parse()?),
            "injected-result" => Defect::InjectedResult,
            "unbound-handles" => Defect::UnboundHandles,
            "answer-removed-methods" => Defect::AnswerRemovedMethods,
            "serve-legacy-http" => Defect::ServeLegacyHttp,
            "session-optional" => Defect::SessionOptional,
            "terminated-session-400" => Defect::TerminatedSession400,
            "server-request" => Defect::ServerRequest(value()?.parse()?),
            "legacy-sse-endpoint" => Defect::LegacySseEndpoint,
            "dynamic-client-registration" => Defect::DynamicClientRegistration,
            "close-after-response" => Defect::CloseAfterResponse,
            "legacy-only" => Defect::LegacyOnly,
            "host-421" => Defect::Host421,
            "initialize-invalid-params" => Defect::InitializeInvalidParams,
            "error-id-null" => Defect::ErrorIdNull,
            "leak-secret" => Defect::LeakSecret(match value()?.strip_prefix("env:") {
                Some(var) => std::env::var(var)
                    .map_err(|_| format!("leak-secret=env:{var}: the variable is not set"))?,
                None => value()?.to_owned(),
            }),
            "progress-wrong-token" => Defect::ProgressWrongToken,
            "log-without-level" => Defect::LogWithoutLevel,
            "log-level-ignored" => Defect::LogLevelIgnored,
            "completion-over-limit" => Defect::CompletionOverLimit,
            "missing-capability-old-code" => Defect::MissingCapabilityOldCode,
            "input-required-empty" => Defect::InputRequiredEmpty,
            "input-required-unanswered" => Defect::InputRequiredUnanswered,
            "subscribe-refused" => Defect::SubscribeRefused,
            "unrequested-list-changed" => Defect::UnrequestedListChanged,
            "set-level-refused" => Defect::SetLevelRefused,
            "slow-read-tool" => Defect::SlowReadTool(
                value()?
                    .parse()
                    .map_err(|e| format!("expected whole seconds: {e}"))?,
            ),
            "listen-no-ack" => Defect::ListenNoAck,
            "listen-unrequested" => Defect::ListenUnrequested,
            "listen-ignores-cancel" => Defect::ListenIgnoresCancel,
            "list-changed-never-sent" => Defect::ListChangedNeverSent,
            "progress-decreasing" => Defect::ProgressDecreasing,
            "listen-no-subscription-id" => Defect::ListenNoSubscriptionId,
            other => return Err(format!("unknown defect `{other}`")),
        })
    }

    pub fn info(&self) -> &'static DefectInfo {
        Self::CATALOG
            .iter()
            .find(|info| info.name == self.name())
            .expect("every defect has a catalog entry")
    }

    /// The catalog as help text, one defect a line.
    pub fn catalog_help() -> String {
        let mut text = String::from("Defects (--defect NAME[=VALUE], repeatable):\n");
        for info in Self::CATALOG {
            let flag = match info.value {
                Some(value) => format!("{}={value}", info.name),
                None => info.name.to_owned(),
            };
            text.push_str(&format!(
                "  {flag:<22} {} [{}]\n",
                info.description, info.scope
            ));
        }
        text
    }
}

impl FromStr for Defect {
    type Err = String;

    fn from_str(flag: &str) -> Result<Self, Self::Err> {
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (flag, None),
        };
        let Some(info) = Self::CATALOG.iter().find(|info| info.name == name) else {
            let names: Vec<&str> = Self::CATALOG.iter().map(|info| info.name).collect();
            return Err(format!(
                "unknown defect `{name}`; valid defects: {}",
                names.join(", ")
            ));
        };
        match (info.value, value) {
            (Some(placeholder), None | Some("")) => Err(format!(
                "defect `{name}` needs a value: {name}={placeholder}"
            )),
            (None, Some(_)) => Err(format!("defect `{name}` takes no value")),
            _ => Self::from_name(name, value).map_err(|error| format!("--defect {flag}: {error}")),
        }
    }
}
