//! The built-in checks a step can run (`check:`), by name, with their settings.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::ground::yaml::value::At;
use crate::language::dsl::limits;

/// A built-in multi-request check.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Check {
    /// Which check to run.
    pub kind: At<CheckKind>,
    /// The list method it applies to (default `tools/list`).
    #[serde(default)]
    pub method: Option<At<String>>,
    /// Checks that call tools: the tools they may call besides those annotated
    /// `readOnlyHint: true`. Default: the `safe_tools` variable (`--set safe_tools=a,b`),
    /// else read-only tools only. A tool outside both is never called.
    #[serde(default)]
    pub safe_tools: Option<Vec<String>>,
    /// How many: requests in the `stdout_clean` burst (default 32), calls per tool in
    /// `handles_unguessable` (default 5).
    #[serde(default)]
    #[schemars(range(min = *limits::CHECK_COUNT.start(), max = *limits::CHECK_COUNT.end()))]
    pub count: Option<At<u32>>,
    /// `deprecated_feature_unused` only: the deprecated feature to look for.
    #[serde(default)]
    pub feature: Option<At<DeprecatedFeature>>,
}

/// A feature in the 2026-07-28 registry of deprecated features (`deprecated.mdx`,
/// SEP-2596), as a `deprecated_feature_unused` check looks for it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DeprecatedFeature {
    /// The server sent a `sampling/createMessage` request on the connection.
    Sampling,
    /// The server sent a `roots/list` request on the connection.
    Roots,
    /// A `sampling/createMessage` request asked for `includeContext` `thisServer` or
    /// `allServers`.
    IncludeContext,
    /// HTTP: a GET on the endpoint opens an HTTP+SSE stream whose first event is
    /// `endpoint` (the transport of 2024-11-05).
    HttpSse,
    /// HTTP: `/.well-known/oauth-authorization-server` advertises a
    /// `registration_endpoint` (skipped when the server serves no such metadata).
    DynamicClientRegistration,
}

/// The built-in checks, by their YAML name (the variant in snake_case).
///
/// Adding a check touches three places: a variant here with a doc line (the JSON Schema
/// and `validate` list the names and their descriptions from here, and an unknown name is
/// a load error that lists the valid ones); a function in its family's file under
/// `src/run/engine/checks/` returning `Result<CheckOutcome, String>`, with its arm in the
/// exhaustive match of `engine::checks::run`; and a YAML step that uses it (in a pack
/// under `specs/` or a test scenario), shown failing against a server with the defect
/// and passing against one without.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[schemars(description = "A built-in check, by name.")]
pub enum CheckKind {
    /// Two full traversals of the list return the items in the same order.
    ListDeterministic,
    /// A second, fresh connection (same target and era) sees the same items.
    ListStableAcrossConnections,
    /// Every page of the list carries the same `cacheScope`.
    CacheScopeConsistentAcrossPages,
    /// Nothing but JSON-RPC appeared on the server's stdout on this connection, also
    /// under a burst of concurrent requests (stdio; skipped over HTTP).
    StdoutClean,
    /// A dual-era server connects in both eras (legacy and 2026-07-28).
    CrossEraConnect,
    /// Both eras see the same tools (with the same definitions), resources, templates
    /// and prompts.
    CrossEraListsMatch,
    /// Both eras declare the same capabilities.
    CrossEraCapabilitiesMatch,
    /// `auto` picks the modern era on a server that supports it.
    AutoPicksModern,
    /// Every message the server sent so far on this connection (handshake included) is
    /// valid against the message schema of its revision: each response as the result type
    /// of its request's method, each error and notification by its shape. Sends nothing.
    WireValid,
    /// The HTTP endpoint refuses a request without credentials (401/403); fails with
    /// "endpoint is unauthenticated" otherwise (skipped over stdio).
    EndpointRequiresAuth,
    /// HTTP, with the OAuth sign-in (`auth:`): the protected-resource metadata is served
    /// at its well-known URI (RFC 9728), names this server as its `resource` and lists
    /// `authorization_servers`.
    ResourceMetadataServed,
    /// HTTP, with `auth:`: the authorization server's metadata (RFC 8414 / OpenID
    /// discovery) has the `issuer` the resource names, a `token_endpoint` and
    /// `response_types_supported`.
    AuthorizationServerMetadataValid,
    /// HTTP, with `auth:`: the authorization server lists `S256` among
    /// `code_challenge_methods_supported`.
    PkceS256Advertised,
    /// HTTP, with `auth:`: a token mcpspec fetches for another resource (RFC 8707) gets
    /// 401 with a Bearer challenge.
    OtherResourceTokenRejected,
    /// HTTP, with `auth:`: a token of the sign-in's client that lives at most 10 s is
    /// waited out and sent: 401 with a Bearer challenge (skipped when tokens live longer).
    ExpiredTokenRefused,
    /// HTTP, with `auth:`: a token fetched without the needed scope (or with
    /// `narrow_scope`) gets 403 with `error="insufficient_scope"` and the `scope` needed
    /// (skipped when that token is accepted).
    InsufficientScopeStepUp,
    /// HTTP: the valid token sent only as `?access_token=` is refused (400/401/403).
    QueryTokenRejected,
    /// A bounded burst (`rate_limit_requests` requests within `rate_limit_seconds`) shows
    /// whether the server throttles (HTTP 429 or an error): fails when nothing was throttled.
    RateLimit,
    /// Allowed tools called with arguments their `inputSchema` rejects answer with a tool
    /// result carrying `isError: true` (SEP-1303), not a protocol error or a success.
    ToolInputErrorsAreResults,
    /// Allowed tools with an `outputSchema`, called with example arguments, return
    /// `structuredContent` that conforms to it.
    ToolOutputSchema,
    /// Those results also carry the serialized `structuredContent` in a text block.
    ToolOutputText,
    /// Allowed tools survive boundary and type-confused arguments: an `isError` result or
    /// -32602 for rejected ones, never a crash, a hang or a success.
    ToolInputFuzz,
    /// Handle-like values returned by allowed tools are not sequential or guessable.
    HandlesUnguessable,
    /// A handle minted for the valid token is refused under `other_user_token` (HTTP).
    HandleBinding,
    /// Descriptions (tools, prompts, resources, templates, instructions) carry no text
    /// addressed to the model (hidden characters, overrides, exfiltration, hidden markup).
    DescriptionInjection,
    /// Results of allowed tool calls carry no text addressed to the model.
    ResultInjection,
    /// The deprecated `feature` is not used (a warning names it and its earliest
    /// removal): server requests are looked for in everything the connection received
    /// (after one more harmless request to flush them).
    DeprecatedFeatureUnused,
    /// HTTP, legacy: a session that a fresh `initialize` assigned and a DELETE ended
    /// answers further requests with 404 (skipped when the server assigns no session or
    /// answers the DELETE with 405).
    SessionTerminatedNotFound,
    /// HTTP: a request whose `Host` names a foreign domain (DNS rebinding) is refused with
    /// a 4xx carrying no result (skipped over stdio).
    ForeignHostRejected,
    /// HTTP: a request whose `Origin` is foreign (DNS rebinding) is refused with a 4xx
    /// carrying no result, whatever the status (before 2025-11-25 no status is named;
    /// skipped over stdio).
    ForeignOriginRefused,
    /// 2026-07-28: `subscriptions/listen` for every declared `listChanged` is acknowledged
    /// first, by `notifications/subscriptions/acknowledged` naming the request's id in
    /// `_meta` `io.modelcontextprotocol/subscriptionId` and honoring a subset of the filter.
    ListenAcknowledged,
    /// 2026-07-28: after `list_change_tool` changes the tools list, the subscription that
    /// asked for `toolsListChanged` gets `notifications/tools/list_changed`.
    ListenDeliversListChanged,
    /// 2026-07-28: a subscription that opted in to nothing gets no `list_changed` (or
    /// `resources/updated`) when `list_change_tool` changes the tools list.
    ListenOnlyRequested,
    /// 2026-07-28, stdio: after `notifications/cancelled` names the listen request, nothing
    /// more arrives on its subscription (over HTTP closing the stream is the cancellation:
    /// skipped).
    ListenEndsOnCancel,
    /// A request cut short (not JSON) on a connection of the check's own gets a JSON-RPC
    /// error -32700 (stdio: a line; HTTP: a JSON body). One probe per scenario, shared with
    /// `parse_error_id_null` and `parse_error_survived`.
    ParseErrorAnswered,
    /// The error answering that line carries `id: null` or no id, never an id no request
    /// had (skipped when no JSON-RPC error came back).
    ParseErrorIdNull,
    /// After that line the connection still answers a harmless request (`ping`, modern
    /// `server/discover`) as it did before it (stdio: the same process; HTTP: the same
    /// session).
    ParseErrorSurvived,
    /// Requests that are JSON but no valid JSON-RPC Request — without `jsonrpc`, with
    /// `jsonrpc: "1.0"`, with a `method` that is no string, with an `id` that is an object —
    /// sent one by one on a connection of the check's own, each get a JSON-RPC error -32600
    /// (Invalid Request) carrying the request's id, or a null id (or none) when the id cannot
    /// be read; over HTTP an HTTP 4xx refusal also answers one.
    InvalidRequestAnswered,
    /// The server sends no `notifications/message` on this connection: after the
    /// handshake, for each declared list, and while each allowed tool runs with example
    /// arguments (modern: every request asks for `logLevel: debug`) — and on the
    /// parse-error probe's connection, around a request cut short. For a server that does
    /// not declare `logging` (`requires: {capabilitiesAbsent: [logging]}`). The run's other
    /// scenarios' connections are judged here too, once per scenario (the scenario runs
    /// after all the others).
    LogMessagesAbsent,
    /// No connection of the run (the scenario's own, every other scenario's: it runs after
    /// them all) received a `notifications/tools/list_changed`, `…/prompts/list_changed`
    /// or `…/resources/list_changed` without the server declaring that list's
    /// `listChanged`, nor a `notifications/resources/updated` without `resources.subscribe`;
    /// once per scenario and notification.
    UndeclaredNotificationsAbsent,
    /// `prompts/get` of the first prompt with a required argument, sent without
    /// arguments, is refused with -32602 (skipped when no prompt has a required argument).
    PromptMissingArgumentRejected,
    /// The server asks the client only for the capabilities it declared (none, unless the
    /// scenario's `client:` declares some): while each allowed tool runs with example
    /// arguments, no `roots/list`, `sampling/createMessage` or `elicitation/create` for an
    /// undeclared capability — legacy, as a request on the connection; 2026-07-28, in an
    /// `input_required` result's `inputRequests`.
    AsksOnlyDeclared,
    /// Every form-mode `elicitation/create` the server asks while each allowed tool runs with
    /// example arguments requests a schema within the spec's restricted form: a flat object
    /// of primitive properties (SEP-1330's enum forms included). Needs a `client:` that
    /// declares elicitation (and answers it).
    ElicitationSchemaRestricted,
    /// A tool whose elicitation the client declined answers with a result (its `isError` if
    /// it cannot go on), not a protocol error; 2026-07-28 calls are carried through their
    /// `input_required` rounds. Needs a `client:` that declines elicitation.
    DeclinedElicitationAnswered,
    /// 2026-07-28: each allowed tool answered `input_required` ends the same way when its
    /// retry carries, besides the answers asked, a response under a key the server did not
    /// ask for (`mcpspec-unasked`). Needs a `client:` that answers.
    ExtraResponsesIgnored,
    /// 2026-07-28: each allowed tool answered `input_required` with a `requestState`,
    /// retried with that state altered, is not completed — unless it is completed without
    /// any state too (the state decides nothing). Needs a `client:` that answers.
    RequestStateTamperedRefused,
    /// 2025-11-25: each allowed tool that supports tasks (`execution.taskSupport`), called
    /// as a task with example arguments and polled to its end and twice more, reports no
    /// status after a terminal one (`completed`, `failed`, `cancelled` are final). Skipped
    /// when the server does not declare `tasks.requests.tools.call`.
    TaskStatusForward,
    /// HTTP: a request answered with an SSE stream gets, first on that stream, an event with
    /// an event id and empty data (the 2025-11-25 priming event); skipped when the server
    /// answers with JSON, or over stdio.
    SsePrimingEvent,
}

impl CheckKind {
    /// Checks that test the connection's own life (a session ended on purpose): they run
    /// on a server process of their own. Every other check only reads, or changes the
    /// server through `list_change_tool` ([`Self::parameters`]), which the engine sees.
    pub fn tests_connection_life(self) -> bool {
        matches!(self, CheckKind::SessionTerminatedNotFound)
    }

    /// Checks whose probe disturbs a process of its own (a cut-short request, invalid
    /// requests), which nobody uses after it: over stdio it may be a warm process no other
    /// scenario needs any more.
    pub fn probes_own_process(self) -> bool {
        matches!(
            self,
            CheckKind::ParseErrorAnswered
                | CheckKind::ParseErrorIdNull
                | CheckKind::ParseErrorSurvived
                | CheckKind::InvalidRequestAnswered
                | CheckKind::LogMessagesAbsent
        )
    }

    /// Checks that judge what every other scenario's connection received: their scenario
    /// runs after all the run's other scenarios.
    pub fn judges_run(self) -> bool {
        matches!(
            self,
            CheckKind::LogMessagesAbsent | CheckKind::UndeclaredNotificationsAbsent
        )
    }

    /// Checks that call tools (and read their settings from the variables).
    pub fn calls_tools(self) -> bool {
        matches!(
            self,
            CheckKind::ToolInputErrorsAreResults
                | CheckKind::ToolOutputSchema
                | CheckKind::ToolOutputText
                | CheckKind::ToolInputFuzz
                | CheckKind::HandlesUnguessable
                | CheckKind::HandleBinding
                | CheckKind::DescriptionInjection
                | CheckKind::ResultInjection
                | CheckKind::LogMessagesAbsent
                | CheckKind::AsksOnlyDeclared
                | CheckKind::ElicitationSchemaRestricted
                | CheckKind::DeclinedElicitationAnswered
                | CheckKind::ExtraResponsesIgnored
                | CheckKind::RequestStateTamperedRefused
                | CheckKind::TaskStatusForward
        )
    }

    /// The parameters this check reads (beyond its step options). Every pack containing
    /// the check declares them, so `--set`, `parameters:` and `MCPSPEC_PARAM_<NAME>` reach
    /// it (`builtin_packs_declare_what_their_checks_read` holds the built-in packs to it).
    pub fn parameters(self) -> &'static [&'static str] {
        const CALLS: &[&str] = &["safe_tools", "tool_call_budget"];
        match self {
            CheckKind::ToolInputErrorsAreResults
            | CheckKind::ToolOutputSchema
            | CheckKind::ToolOutputText
            | CheckKind::ToolInputFuzz
            | CheckKind::LogMessagesAbsent
            | CheckKind::AsksOnlyDeclared
            | CheckKind::ElicitationSchemaRestricted
            | CheckKind::DeclinedElicitationAnswered
            | CheckKind::ExtraResponsesIgnored
            | CheckKind::RequestStateTamperedRefused
            | CheckKind::TaskStatusForward => CALLS,
            CheckKind::HandlesUnguessable => &["safe_tools", "tool_call_budget", "handle_paths"],
            CheckKind::HandleBinding => &[
                "safe_tools",
                "tool_call_budget",
                "handle_paths",
                "handle_consumer",
                "other_user_token",
            ],
            CheckKind::DescriptionInjection => &["injection_rules", "injection_disable"],
            CheckKind::ResultInjection => &[
                "safe_tools",
                "tool_call_budget",
                "injection_rules",
                "injection_disable",
            ],
            CheckKind::RateLimit => &["rate_limit_requests", "rate_limit_seconds"],
            CheckKind::InsufficientScopeStepUp => &[NARROW_SCOPE],
            CheckKind::ListenDeliversListChanged
            | CheckKind::ListenOnlyRequested
            | CheckKind::ListenEndsOnCancel => &[LIST_CHANGE_TOOL],
            _ => &[],
        }
    }
}

/// The parameter naming a tool whose call adds or removes a tool: the subscription
/// checks' trigger, and what makes a scenario change a shared server for every client
/// ([`crate::language::dsl::scenario::Step::changes_target`]).
pub const LIST_CHANGE_TOOL: &str = "list_change_tool";

/// The parameter naming the scope of the too-narrow token of
/// `insufficient_scope_step_up` (unset: the token is asked for without a scope).
pub const NARROW_SCOPE: &str = "narrow_scope";
