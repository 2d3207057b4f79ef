//! The scenario DSL as Rust types: the single source of truth for both loading
//! (serde, with positions) and the published JSON Schema (schemars).
//!
//! Expectations are plain structs with optional keys rather than untagged enums: the
//! YAML loader keeps nested positions only through structs and externally tagged enums.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use super::limits;
use crate::ground::yaml::value::{At, TValue};
use check::Check;

pub mod check;
mod client;
mod expect;
mod pack;
mod workload;

pub use client::{ClientCapabilitiesDoc, ClientDoc, ElicitAction, RootDoc};
pub use expect::{
    CodeSpec, DurationCompare, Expectation, JsonType, LengthCompare, LengthSpec, Num, Sanitizer,
    TaskStatusSpec,
};
pub use pack::{GroupDoc, ImportDoc, PackDoc, ParamDecl, ParamType};
pub use workload::{BudgetDoc, LoadDoc};

/// One scenario file: an ordered list of steps run over one connection per era.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "mcpspec scenario")]
pub struct ScenarioDoc {
    /// Scenario id: stable, used in reports and baselines as `scenario@era:step`.
    pub scenario: At<String>,
    /// What the scenario checks, in one sentence.
    #[serde(default)]
    pub description: Option<String>,
    /// Labels for selection with `--tag`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Eras this scenario applies to: `legacy`, `modern`, `auto`, or a revision such as
    /// `2025-11-25` / `2026-07-28`. Without it the scenario applies to every era.
    #[serde(default)]
    pub eras: Vec<At<String>>,
    /// Preconditions: when the server does not meet them, every step is skipped with
    /// the reason.
    #[serde(default)]
    pub requires: Option<RequiresDoc>,
    /// Variables available to templates (`{{ name }}`).
    #[serde(default)]
    pub vars: IndexMap<String, TValue>,
    /// `true`: the scenario changes state other scenarios read (it creates, deletes or
    /// toggles something on the server, or behind it), so it runs alone, never beside
    /// another scenario of the run, whatever `--jobs` says.
    #[serde(default)]
    pub exclusive: bool,
    /// Over stdio, which server process the scenario runs on. `true`: a process no other
    /// scenario uses after it (in the legacy era, a session nobody else gets after it):
    /// its era's warm process once no sharing scenario of the era needs it any more, else
    /// one started for it; it is stopped after the scenario. `false`: a warm process
    /// shared, one scenario after another, with the run's other sharing scenarios of the
    /// same era: the author says it leaves nothing behind that another could see. Without
    /// it: the pack's `fresh`, else shared when every step only reads (list, get, read,
    /// discover, ping requests and the read-only built-in checks), as with `true`
    /// otherwise. A scenario that is `exclusive` is as with `true`; one that calls
    /// `list_change_tool` or tests the connection's life (`initialize`, session
    /// termination) always gets a process started for it.
    #[serde(default)]
    pub fresh: Option<bool>,
    /// The client mcpspec plays: the capabilities it declares and its answers to the
    /// server's requests (roots, elicitation, sampling). Without it: the pack's, else
    /// `mcpspec.yaml`'s, else none declared (every server request answered -32601).
    #[serde(default)]
    pub client: Option<At<ClientDoc>>,
    /// How `mcpspec load` runs this scenario as a workload: the profile (clients or rate,
    /// duration, warm-up, ramp, steps, think time) and its weight in the mix and data rows
    /// per iteration. `mcpspec run` ignores it.
    #[serde(default)]
    pub load: Option<At<LoadDoc>>,
    /// The steps, run in order.
    #[serde(deserialize_with = "crate::ground::yaml::value::exact_vec")]
    pub steps: Vec<At<StepDoc>>,
    /// Steps run before `steps` (e.g. create a fixture). When one fails or errors, `steps`
    /// are skipped with the reason and `teardown` still runs.
    #[serde(default, deserialize_with = "crate::ground::yaml::value::exact_vec")]
    pub setup: Vec<At<StepDoc>>,
    /// Steps run after `steps`, even when steps (or `setup`) failed: clean up what the
    /// scenario made. Skipped only when the connection itself is gone.
    #[serde(default, deserialize_with = "crate::ground::yaml::value::exact_vec")]
    pub teardown: Vec<At<StepDoc>>,
}

// The less common parts are boxed: a long scenario's steps are moved around whole while
// loading, and unboxed they took 1.4 kB each. (Not a doc comment: those are the schema's
// descriptions.)
/// One request, notification or raw message, then expectations and captures.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(rename = "Step")]
pub struct StepDoc {
    /// Step name; also the check id in reports (`scenario@era:name`). Required, except on a
    /// group call (`use:`), where it prefixes the group's step names (`name/step`).
    #[serde(default)]
    pub name: Option<At<String>>,
    /// Call a reusable step group of the pack (`groups:` in `pack.yaml`): its steps run
    /// here, in place of this one. Takes only `name` and `with`.
    #[serde(default, rename = "use")]
    pub use_: Option<At<String>>,
    /// Arguments of a group call: values for the group's `parameters` (templates allowed).
    #[serde(default)]
    pub with: Option<Box<At<IndexMap<String, TValue>>>>,
    /// Data-driven: run this step (or group call) once per row — a list written here,
    /// `"{{ name }}"` naming a scenario variable that holds a list, or `{file: rows.csv}`:
    /// a data file next to the scenario (CSV with a header line, values as text; or a JSON
    /// or YAML list). The row is the template variable `row` (or the name given by `as`),
    /// its position `row_index` (from 0); the check id carries the row: `name[Boston]` (a
    /// scalar row, a row's `id`/`name` key, a data file row's first column), else `name[0]`.
    #[serde(default)]
    pub each: Option<TValue>,
    /// With `each`: the variable name of the row (default `row`).
    #[serde(default, rename = "as")]
    pub as_: Option<At<String>>,
    #[serde(default)]
    pub description: Option<String>,
    /// Run this step only when the connection's era matches one of these.
    #[serde(default)]
    pub eras: Option<Vec<At<String>>>,
    /// Run this step only over this transport (`http` or `stdio`); skipped otherwise.
    #[serde(default)]
    pub transport: Option<TransportKind>,
    /// Preconditions of this step (skipped with the reason when unmet).
    #[serde(default)]
    pub requires: Option<Box<RequiresDoc>>,
    /// `must` (default): a failed expectation fails the run. `should`: it is a warning.
    #[serde(default)]
    pub level: Option<StepLevel>,
    /// The spec rule this step enforces: a row of mcpspec's rule table (the built-in packs'
    /// check ids, `mcpspec list conformance`). The revision the connection negotiated
    /// decides the level (MUST, SHOULD) or skips the step where it is no rule; not with
    /// `level`.
    #[serde(default)]
    pub rule: Option<At<String>>,
    /// Per-request timeout for this step, e.g. `500ms`, `10s`: 1ms to 1day (default: `--timeout`).
    #[serde(default)]
    pub timeout: Option<At<String>>,
    /// Retry a failing step against an eventually-consistent server: up to `count` more
    /// attempts, `interval` apart, until its expectations hold.
    #[serde(default)]
    pub retry: Option<Box<At<RetryDoc>>>,
    /// A JSON-RPC request; the engine adds `jsonrpc`, `id` and the era's `_meta`.
    #[serde(default)]
    pub request: Option<At<Request>>,
    /// A JSON-RPC notification (no response expected).
    #[serde(default)]
    pub notification: Option<Box<At<Notification>>>,
    /// A message sent exactly as written: nothing added, nothing validated.
    #[serde(default)]
    pub raw: Option<Box<At<Raw>>>,
    /// Compare the live server's contract with a baseline snapshot (`mcpspec snapshot`).
    #[serde(default)]
    pub contract: Option<Box<At<ContractCheck>>>,
    /// `true`: no message is sent; the expectations apply to the connection's handshake
    /// result (`initialize` in the legacy era, `server/discover` in the modern era).
    #[serde(default)]
    pub handshake: Option<At<bool>>,
    /// A built-in check that needs more than one request (two traversals, a second
    /// connection, every page): fails with what it found.
    #[serde(default)]
    pub check: Option<Box<At<Check>>>,
    /// Replace the client's roots from here on, for the rest of the scenario: later
    /// `roots/list` requests (2026-07-28: roots input requests) are answered with this list
    /// (file URIs; templates allowed). Legacy era, with `roots: {listChanged: true}`
    /// declared: mcpspec also sends `notifications/roots/list_changed`. The scenario's
    /// `client:` must declare `roots`.
    #[serde(default)]
    pub roots: Option<At<Vec<RootDoc>>>,
    /// Expectations, all of which must hold.
    #[serde(default)]
    pub expect: Vec<At<Expectation>>,
    /// Variables to capture: `name: "$.jsonpath"` (the response's first match), or
    /// `name: {asked: METHOD, path: "$.jsonpath"}` (the first match among the requests the
    /// server asked the client during the step, `*`: of any method).
    #[serde(default)]
    pub capture: IndexMap<String, At<CaptureDoc>>,
}

/// What one capture takes: a JSONPath on the response, or on what the server asked.
#[derive(Debug, Clone)]
pub enum CaptureDoc {
    /// `"$.jsonpath"`: the response's first match.
    Response(String),
    /// `{asked: METHOD, path: "$.jsonpath"}`: the first match among the requests the
    /// server asked the client (legacy: its requests on the connection; 2026-07-28: the
    /// `inputRequests` of every round).
    Asked(CaptureAsked),
}

/// `{asked: METHOD, path: "$.jsonpath"}`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureAsked {
    /// The method the server asked (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`), or `*`: any.
    pub asked: At<String>,
    /// A JSONPath on each request (`$.params.message`): the first match is captured.
    pub path: At<String>,
}

impl<'de> Deserialize<'de> for CaptureDoc {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CaptureDoc;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a JSONPath (`\"$.content[0].text\"`) or `{asked: METHOD, path: JSONPATH}`",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CaptureDoc, E> {
                Ok(CaptureDoc::Response(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<CaptureDoc, A::Error> {
                CaptureAsked::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(CaptureDoc::Asked)
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for CaptureDoc {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Capture".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let asked = generator.subschema_for::<CaptureAsked>();
        schemars::json_schema!({
            "description": "A JSONPath on the response (its first match), or `{asked, path}`: a JSONPath on the requests the server asked the client during the step (the first match).",
            "anyOf": [{"type": "string"}, asked]
        })
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StepLevel {
    Must,
    Should,
}

/// A JSON-RPC request built by the engine for the connection's era.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Request {
    /// JSON-RPC method, e.g. `tools/list`, `tools/call`.
    pub method: At<String>,
    /// Request params (without `_meta`; use `meta` to change it).
    #[serde(default)]
    pub params: Option<TValue>,
    /// Use this JSON-RPC id instead of the engine's counter.
    #[serde(default)]
    pub id: Option<TValue>,
    /// Override `_meta` keys (modern era): a value replaces, `null` removes. Short names
    /// `protocolVersion`, `clientCapabilities`, `clientInfo`, `logLevel` mean the
    /// `io.modelcontextprotocol/` keys.
    #[serde(default)]
    pub meta: Option<IndexMap<String, TValue>>,
    /// HTTP only: set headers (a value replaces the engine's), `null` drops a header.
    #[serde(default)]
    pub headers: Option<IndexMap<String, TValue>>,
    /// List methods: follow `nextCursor` to the end and merge the pages.
    #[serde(default)]
    pub paginate: bool,
    /// Legacy era (2025-11-25): call as a task — the params get `task: {ttl}`, mcpspec polls
    /// `tasks/get` until a terminal status (or cancels it), fetches `tasks/result`, and the
    /// expectations judge that result (`taskStatus` the statuses seen).
    #[serde(default)]
    pub task: Option<At<RequestTaskDoc>>,
}

/// `task:` of a request: how the task is run and polled.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(rename = "Task")]
pub struct RequestTaskDoc {
    /// The retention asked for, in milliseconds (`TaskMetadata.ttl`); the server decides.
    #[serde(default)]
    pub ttl: Option<u64>,
    /// The pause between `tasks/get` polls when the server suggests no `pollInterval`
    /// (default `100ms`); a server's own is honoured within 1ms to 1m. Every poll and pause
    /// stays within the step's timeout.
    #[serde(default)]
    pub poll_interval: Option<At<String>>,
    /// At most this many `tasks/get` polls (default 1000); a task still not done after them
    /// errors the step with the statuses seen.
    #[serde(default)]
    #[schemars(range(min = *limits::TASK_POLLS.start(), max = *limits::TASK_POLLS.end()))]
    pub max_polls: Option<At<u32>>,
    /// Send `tasks/cancel` once the task is created, then poll until it ends (`cancelled`
    /// expected; the step is judged on the last `tasks/get` result, the task).
    #[serde(default)]
    pub cancel: bool,
}

/// A JSON-RPC notification.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Notification {
    pub method: At<String>,
    #[serde(default)]
    pub params: Option<TValue>,
    #[serde(default)]
    pub meta: Option<IndexMap<String, TValue>>,
    #[serde(default)]
    pub headers: Option<IndexMap<String, TValue>>,
}

/// A message sent verbatim. A string body is sent byte for byte (it need not be JSON);
/// a mapping or list is serialized as JSON. No `_meta`, id or headers are added.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Raw {
    pub body: TValue,
    /// HTTP only: request headers. Only `Content-Type` and `Accept` are set by default;
    /// a `null` drops one of those.
    #[serde(default)]
    pub headers: Option<IndexMap<String, TValue>>,
    /// HTTP only: the request method (default `POST`), e.g. `GET` or `DELETE`.
    #[serde(default)]
    pub http_method: Option<At<String>>,
    /// Send it over a fresh connection of its own, with no handshake (stdio: a separate,
    /// short-lived server process), for probes that may disturb the server.
    #[serde(default)]
    pub fresh: bool,
}

/// Retries of a step.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RetryDoc {
    /// Attempts after the first one.
    #[schemars(range(min = *limits::RETRY_COUNT.start(), max = *limits::RETRY_COUNT.end()))]
    pub count: u32,
    /// Pause between attempts, e.g. `200ms` (default `100ms`; 0s to 1h).
    #[serde(default)]
    pub interval: Option<At<String>>,
}

/// Preconditions of a scenario or step.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(rename = "Requires")]
pub struct RequiresDoc {
    /// Server capabilities that must be declared, as dotted paths into `capabilities`:
    /// `tools`, `resources.subscribe`, `prompts.listChanged`, `extensions.io.example/x`.
    #[serde(default)]
    pub capabilities: Vec<At<String>>,
    /// Server capabilities that must NOT be declared (checks of undeclared features).
    #[serde(default)]
    pub capabilities_absent: Vec<At<String>>,
    /// The transport the checks need.
    #[serde(default)]
    pub transport: Option<TransportKind>,
    /// Parameters that must be set (`--set NAME=…`); skipped with the reason otherwise.
    /// Templates may refer to these names even though nothing else defines them.
    #[serde(default)]
    pub parameters: Vec<At<String>>,
    /// `true`: the HTTP endpoint refuses a request without credentials (probed once per
    /// connection: the request with the target's `Authorization` removed). Skipped with
    /// "endpoint is unauthenticated" when it answers.
    #[serde(default)]
    pub auth_required: bool,
    /// `true`: the HTTP target's host is `localhost` or a loopback address (checks that
    /// only make sense, or are only safe, against a local server).
    #[serde(default)]
    pub loopback: bool,
    /// Conditions on the `supportedVersions` that `server/discover` lists (known in the
    /// modern era only: a legacy connection has no discover result, so it is unmet there).
    #[serde(default)]
    pub supported_versions: Option<SupportedVersions>,
    /// HTTP response headers the connection's handshake (`initialize` or
    /// `server/discover`) must have carried, e.g. `[Mcp-Session-Id]`: the server assigns
    /// sessions. Unmet over stdio.
    #[serde(default)]
    pub handshake_headers: Vec<At<String>>,
    /// `false`: the server does not complete a legacy `initialize` handshake; `true`: it
    /// does. Probed on a fresh connection, only once the other conditions hold (e.g. a
    /// server whose `server/discover` lists only modern versions may still serve legacy
    /// clients: it is dual-era, and `supportedVersions` alone would not tell).
    #[serde(default)]
    pub legacy_handshake: Option<bool>,
    /// Methods the server must serve: each is sent once (no params) and an answer of -32601
    /// (method not found) skips with the reason. For optional methods such as
    /// `resources/templates/list`, which declaring `resources` does not oblige a server to serve.
    #[serde(default)]
    pub served: Vec<At<String>>,
    /// Template expressions (no braces) that must have a value, each with the reason to
    /// give when it has none: `{ "resources[0].uri": "no resource to read" }`. A step
    /// whose input comes from a list the server may legitimately leave empty is skipped
    /// with the reason instead of erroring on an undefined template value.
    #[serde(default)]
    pub defined: IndexMap<String, At<String>>,
}

/// Conditions on the discovered `supportedVersions`, as era selectors (`legacy`,
/// `modern` or a revision such as `2025-11-25`).
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SupportedVersions {
    /// Each selector matches at least one listed version.
    #[serde(default)]
    pub includes: Vec<At<String>>,
    /// No listed version matches any selector: `excludes: [legacy]` means a modern-only
    /// server.
    #[serde(default)]
    pub excludes: Vec<At<String>>,
}

/// A contract check: snapshot the server over this connection and diff it with a
/// baseline; changes that the rules make failing fail the step.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContractCheck {
    /// Baseline snapshot folder, relative to the scenario file.
    pub baseline: At<String>,
    /// Contract rules file (YAML), relative to the scenario file. Default: breaking changes fail.
    #[serde(default)]
    pub rules: Option<At<String>>,
}
