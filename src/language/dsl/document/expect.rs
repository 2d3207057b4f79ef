//! Expectations of a step: what its response must be.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::ground::yaml::value::{At, TValue};

/// One expectation. Use exactly one kind: `path` (with predicates), `schema`,
/// `schemaFile`, `json` (with `path`), `error`, `isError`, `outputSchema`, `http`, `noResponse`, `duration`,
/// `rounds`, `notifications` or `asked` (which take `path` and predicates too) or
/// `snapshot` (which takes `path`, `sanitize` and `perEra`).
///
/// JSONPath and `schema` apply to the response's `result`; for an error response the
/// document is `{"error": {...}}`, so `$.error.code` works.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expectation {
    /// RFC 9535 JSONPath evaluated on the result; combine with one or more predicates.
    #[serde(default)]
    pub path: Option<At<String>>,
    /// The (single) match equals this value. Several matches are compared as a list; one
    /// match of a multi-node path (filter, wildcard), against a value that is not a list,
    /// as that value.
    #[serde(default)]
    pub equals: Option<TValue>,
    /// The (single) match differs from this value.
    #[serde(default)]
    pub not_equals: Option<TValue>,
    /// Some match contains this: an element of an array, a substring of a string, a
    /// subset of an object; with several matches, one of them equals it.
    #[serde(default)]
    pub contains: Option<TValue>,
    /// Every match is a string matching this regular expression.
    #[serde(default)]
    pub matches: Option<At<String>>,
    /// Every match has this JSON type.
    #[serde(default, rename = "type")]
    pub type_: Option<At<JsonType>>,
    /// The match's length (array, string, object) — or the number of matches when the
    /// path has several. A number or a comparison such as `{gte: 1}`.
    #[serde(default)]
    pub length: Option<LengthSpec>,
    /// At least this many matches (1 or more). A multi-node path (filter, wildcard) that
    /// matched nothing passes every-match predicates (`type`, `oneOf`, comparisons…)
    /// vacuously — the report notes "matched nothing" — unless this demands a match. With
    /// `notifications`: the matches of `path` over the notifications received.
    #[serde(default)]
    pub min_matches: Option<At<u64>>,
    /// `true`: the path matches something. `false`: it matches nothing.
    #[serde(default)]
    pub exists: Option<bool>,
    /// `true`: the path matches nothing (same as `exists: false`).
    #[serde(default)]
    pub absent: Option<bool>,
    /// Every match equals one of these values: a list, or a template that renders to a
    /// list (`oneOf: "{{ supported }}"`).
    #[serde(default)]
    pub one_of: Option<TValue>,
    /// `true`: the matches are pairwise distinct (e.g. tool names).
    #[serde(default)]
    pub unique: Option<bool>,
    /// `true`: the matches, in order, are numbers that strictly increase (e.g. the
    /// `progress` of a request's `notifications/progress`).
    #[serde(default)]
    pub increasing: Option<bool>,
    /// `true`: every match is a valid JSON Schema (draft 2020-12) object.
    #[serde(default)]
    pub valid_schema: Option<bool>,
    /// Numeric comparisons of the match: a number, or a template that renders to one.
    #[serde(default)]
    pub gt: Option<Num<f64>>,
    #[serde(default)]
    pub gte: Option<Num<f64>>,
    #[serde(default)]
    pub lt: Option<Num<f64>>,
    #[serde(default)]
    pub lte: Option<Num<f64>>,
    /// JSON inside a text: the `path` match (e.g. `$.content[0].text`) is a string holding
    /// JSON, decoded and judged by this expectation (any kind that judges a result:
    /// `{path: "$.items[0].id", equals: 3}`, `schema`, ...). Fails when the text is not JSON.
    #[serde(default)]
    pub json: Option<Box<At<Expectation>>>,
    /// An inline JSON Schema (2020-12) the result (or the `path` match) must satisfy.
    #[serde(default)]
    pub schema: Option<TValue>,
    /// A JSON Schema file (JSON or YAML), relative to the scenario file.
    #[serde(default)]
    pub schema_file: Option<At<String>>,
    /// The response is a JSON-RPC error with these properties.
    #[serde(default)]
    pub error: Option<ErrorExpectation>,
    /// The response is a tool result whose `isError` is this value (absent means false).
    #[serde(default)]
    pub is_error: Option<bool>,
    /// `conforms`: `structuredContent` conforms to the tool's declared `outputSchema`
    /// (fetched from `tools/list`), and is present when the tool declares one.
    #[serde(default)]
    pub output_schema: Option<At<OutputSchemaMode>>,
    /// HTTP status and headers of the response (HTTP transport only).
    #[serde(default)]
    pub http: Option<HttpExpectation>,
    /// `true`: the server sends no response (notifications; HTTP 202 with no body).
    #[serde(default)]
    pub no_response: Option<bool>,
    /// The notifications the server sent while the step ran: those of this method, where
    /// `*` stands for any text (`notifications/*/list_changed`; `*` alone: any). Without `count` or a `path`, at least one must have arrived. With `path`
    /// and predicates, the path is evaluated on each of them (the whole message, e.g.
    /// `$.params.level`) and the predicates judge all the matches together, as for a
    /// multi-node path (`oneOf` holds for every match, `contains` for some).
    #[serde(default)]
    pub notifications: Option<At<String>>,
    /// The requests the server asked the client while the step ran (legacy: sent on the
    /// connection; 2026-07-28: the `inputRequests` of its `input_required` rounds), those
    /// of this method (`elicitation/create`, `sampling/createMessage`, `roots/list`; `*`:
    /// any). Takes `count`, and `path` with predicates evaluated on each request (`$.method`,
    /// `$.params.message`), as `notifications` does.
    #[serde(default)]
    pub asked: Option<At<String>>,
    /// 2026-07-28: the `input_required` rounds the request took before its final result,
    /// a number or a comparison (`{lte: 2}`); 0 in the legacy era.
    #[serde(default)]
    pub rounds: Option<LengthSpec>,
    /// A task step (`task:` on the request): the statuses the task reported, consecutive
    /// repeats collapsed — a list is the whole sequence (`[working, completed]`), a single
    /// status the last one (`cancelled`).
    #[serde(default)]
    pub task_status: Option<At<TaskStatusSpec>>,
    /// With `notifications` or `asked`: how many, a number or a comparison (`{gte: 1}`).
    #[serde(default)]
    pub count: Option<LengthSpec>,
    /// With `notifications`: keep listening up to this long after the response, until
    /// the expectation holds, e.g. `500ms` (for notifications a server sends just after
    /// replying; stdio only: over HTTP they come on the request's own stream).
    #[serde(default)]
    pub within: Option<At<String>>,
    /// The step's latency: from sending its message to receiving the response (of the
    /// last attempt with `retry`; of all pages with `paginate`), compared with durations
    /// such as `200ms` or `1.5s`: `duration: {lt: 200ms}`. Request and raw steps.
    #[serde(default)]
    pub duration: Option<At<DurationCompare>>,
    /// A golden response: the result (or its `path` match) equals the JSON file
    /// `__snapshots__/<scenario file stem>/<name>.json` next to the scenario. `mcpspec run
    /// --update-snapshots` writes new and changed files.
    #[serde(default)]
    pub snapshot: Option<At<String>>,
    /// With `snapshot`: volatile parts replaced by placeholders before comparing and
    /// writing: `timestamps`, `uuids`, `jwts`, `{path: "$..id"}` or
    /// `{regex: "req-[0-9]+", replace: "<req>"}`.
    #[serde(default)]
    pub sanitize: Option<Vec<At<Sanitizer>>>,
    /// With `snapshot`: one file per era, `<name>@<era>.json` (when the era changes the
    /// document).
    #[serde(default)]
    pub per_era: Option<bool>,
}

/// A snapshot sanitizer: a built-in name, or a JSONPath, or a regular expression.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Sanitizer {
    /// `timestamps` (ISO 8601 / RFC 3339 date-times), `uuids` or `jwts`.
    Builtin(String),
    /// Every match of the JSONPath is replaced.
    Path(PathSanitizer),
    /// Every match of the regular expression in a string is replaced.
    Regex(RegexSanitizer),
}

/// `{path: "$..id"}`: every match replaced (by `"<path>"` unless `replace` says).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathSanitizer {
    pub path: String,
    #[serde(default)]
    pub replace: Option<String>,
}

/// `{regex: "req-[0-9]+", replace: "<req>"}`: every match in every string replaced (by
/// `"<regex>"` unless `replace` says; `$1` refers to a group).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegexSanitizer {
    pub regex: String,
    #[serde(default)]
    pub replace: Option<String>,
}

/// Comparisons of a duration; each bound is a duration such as `200ms` (1ms to 1day), or
/// a template that renders to one (`"{{ budget }}"`).
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct DurationCompare {
    #[serde(default)]
    pub gt: Option<At<String>>,
    #[serde(default)]
    pub gte: Option<At<String>>,
    #[serde(default)]
    pub lt: Option<At<String>>,
    #[serde(default)]
    pub lte: Option<At<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
    Null,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OutputSchemaMode {
    Conforms,
}

/// A number, or a template that renders to one (`"{{ min_tools }}"`): typed once
/// rendered, when the step is judged.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Num<T> {
    Value(T),
    Template(At<String>),
}

impl<T: Copy + serde::de::DeserializeOwned> Num<T> {
    /// The number, the template rendered against `ctx` and typed (`what`: the kind of
    /// number wanted, for the error).
    pub fn resolve(&self, ctx: &serde_json::Value, what: &str) -> Result<T, String> {
        match self {
            Num::Value(v) => Ok(*v),
            Num::Template(t) => {
                let rendered = crate::language::dsl::template::render_str(t, ctx)
                    .map_err(|e| format!("template error in `{}`: {e}", **t))?;
                let typed = match &rendered {
                    serde_json::Value::String(text) => serde_json::from_str::<T>(text.trim()).ok(),
                    other => serde_json::from_value::<T>(other.clone()).ok(),
                };
                typed.ok_or_else(|| {
                    format!(
                        "`{}` renders to `{}`, not {what}",
                        **t,
                        crate::ground::redact::excerpt(&match rendered {
                            serde_json::Value::String(text) => text,
                            other => other.to_string(),
                        })
                    )
                })
            }
        }
    }
}

impl<T: std::fmt::Display> std::fmt::Display for Num<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Num::Value(v) => v.fmt(f),
            Num::Template(t) => f.write_str(t),
        }
    }
}

/// A length: exact number, or comparisons.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LengthSpec {
    Exact(Num<u64>),
    Compare(LengthCompare),
}

#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct LengthCompare {
    #[serde(default)]
    pub gt: Option<Num<u64>>,
    #[serde(default)]
    pub gte: Option<Num<u64>>,
    #[serde(default)]
    pub lt: Option<Num<u64>>,
    #[serde(default)]
    pub lte: Option<Num<u64>>,
}

/// Expected JSON-RPC error.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ErrorExpectation {
    /// The error code, or a list of acceptable codes.
    #[serde(default)]
    pub code: Option<CodeSpec>,
    /// A regular expression the error message must match.
    #[serde(default)]
    pub message: Option<At<String>>,
    /// `error.data` must contain this (subset match: extra keys allowed).
    #[serde(default)]
    pub data: Option<TValue>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CodeSpec {
    One(i64),
    Any(Vec<i64>),
}

impl CodeSpec {
    pub fn accepts(&self, code: i64) -> bool {
        match self {
            CodeSpec::One(c) => *c == code,
            CodeSpec::Any(cs) => cs.contains(&code),
        }
    }
    /// The codes accepted.
    pub fn codes(&self) -> &[i64] {
        match self {
            CodeSpec::One(c) => std::slice::from_ref(c),
            CodeSpec::Any(cs) => cs,
        }
    }
    pub fn describe(&self) -> String {
        match self {
            CodeSpec::One(c) => c.to_string(),
            CodeSpec::Any(cs) => {
                let parts: Vec<String> = cs.iter().map(|c| c.to_string()).collect();
                format!("one of [{}]", parts.join(", "))
            }
        }
    }
}

/// Expected HTTP status and headers.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpExpectation {
    /// Status code, or a list of acceptable codes.
    #[serde(default)]
    pub status: Option<CodeSpec>,
    /// Header name → regular expression its value must match; `null` means the header
    /// must be absent. Names are case-insensitive.
    #[serde(default)]
    pub headers: IndexMap<String, Option<At<String>>>,
}

/// `taskStatus:`: the last status, or the whole sequence.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TaskStatusSpec {
    Last(String),
    Sequence(Vec<String>),
}
