//! The eval set document as written: the `*Doc` types, source of the JSON Schema
//! (`mcpspec schema evalset`). [`super::EvalSet::load`] checks and compiles them.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use super::super::results::{ModelApi, PassRule, Price, SetKind};
use crate::ground::yaml::value::{At, TValue};
use crate::language::dsl::document::{Expectation, Sanitizer};

/// An eval set: tasks a model performs with the server's tools, and how to judge them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "mcpspec eval set")]
pub struct EvalSetDoc {
    /// The set's name (recorded in results).
    pub evalset: At<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// `regression` (success expected near 100%; runs first after a description edit) or
    /// `capability` (a harder set whose rate is tracked). Default `regression`.
    #[serde(default)]
    pub kind: SetKind,
    /// Trials per task unless a task says otherwise (default 1).
    #[serde(default)]
    pub trials: Option<At<u32>>,
    /// When a task with several trials passes, unless a task says otherwise: `all` its
    /// trials succeed (default) or a `majority` (more than half).
    #[serde(default)]
    pub pass: Option<PassRule>,
    /// A system prompt sent with every task.
    #[serde(default)]
    pub system: Option<String>,
    /// Model profiles by name (`--model NAME`).
    #[serde(default)]
    pub models: IndexMap<String, At<ProfileDoc>>,
    /// The model profile that grades `answer: {judge: RUBRIC}` expectations (a key of
    /// `models:`, possibly another API than the model under test); `--judge` overrides it.
    #[serde(default)]
    pub judge: Option<At<String>>,
    /// What a replay (`eval run --replay`) ignores where the server's tool results differ
    /// from the recording: golden responses' sanitizers, applied to both before comparing —
    /// `{path: "$.id"}` (a JSONPath on a tool result whose text is JSON), `{regex: "…",
    /// replace: "…"}`, `jwts`. Timestamps and UUIDs are always ignored.
    #[serde(default)]
    pub sanitize: Vec<At<Sanitizer>>,
    /// The tasks.
    pub tasks: Vec<At<TaskDoc>>,
}

/// How to reach a model.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProfileDoc {
    /// `openai`: OpenAI-compatible Chat Completions (OpenAI, Azure OpenAI, vLLM, llama.cpp
    /// server, Ollama, LM Studio); `anthropic`: Anthropic Messages.
    pub api: ModelApi,
    /// The API's base URL, e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`,
    /// `https://api.anthropic.com` (`/v1` is added when the URL has no path).
    pub base_url: At<String>,
    /// The model name sent in requests.
    pub model: String,
    /// The API key as `env:VAR` (never the key itself); none for local servers.
    #[serde(default)]
    pub key: Option<At<String>>,
    /// How the key is sent: `bearer` (`Authorization: Bearer`, the default for `openai`;
    /// also OAuth-style tokens on `anthropic`), `x-api-key` (the default for `anthropic`) or
    /// `api-key` (Azure OpenAI keys).
    #[serde(default)]
    pub key_header: Option<KeyHeader>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Model turns per trial before it fails (default 8).
    #[serde(default)]
    pub max_turns: Option<At<u32>>,
    /// Most tool calls one model reply may ask for (default 16; 1 to 1000): a reply asking
    /// for more fails its trial, none of its calls executed.
    #[serde(default)]
    pub max_calls_per_turn: Option<At<u32>>,
    /// `max_tokens` / `max_completion_tokens` per reply (default 1024).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Longest one model request may take, e.g. `90s`, `5m` (default 120s; 1ms to 1day).
    /// `--model-timeout` overrides it.
    #[serde(default)]
    pub timeout: Option<At<String>>,
    /// USD per million tokens, `{input: 3, output: 15}`: results then carry an estimated
    /// cost, and `--max-cost` can cap a run.
    #[serde(default)]
    pub price: Option<At<Price>>,
}

/// The header a model API key travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum KeyHeader {
    Bearer,
    XApiKey,
    ApiKey,
}

/// One task: a prompt (or a conversation) and what a good outcome looks like.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TaskDoc {
    /// Unique within the set; pairs tasks across runs.
    pub id: At<String>,
    /// The user's request.
    #[serde(default)]
    pub prompt: Option<At<String>>,
    /// A conversation instead of `prompt`: user/assistant turns, the last one the user's.
    #[serde(default)]
    pub messages: Option<At<Vec<MessageDoc>>>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Trials of this task (default: the set's `trials`).
    #[serde(default)]
    pub trials: Option<At<u32>>,
    /// When this task passes: `all` its trials succeed or a `majority` (default: the set's
    /// `pass`, else `all`).
    #[serde(default)]
    pub pass: Option<PassRule>,
    /// Expectations on the outcome, each judged on every trial.
    #[serde(default)]
    pub expect: Vec<At<TaskExpectationDoc>>,
}

/// One message of a `messages` conversation.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageDoc {
    pub role: Role,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One expectation; give exactly one of `calls`, `order`, `noToolCall`, `answer`,
/// `maxToolCalls`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TaskExpectationDoc {
    /// The model calls this tool (its MCP name) at least once.
    #[serde(default)]
    pub calls: Option<At<String>>,
    /// With `calls`: some call of the tool has arguments satisfying all of these
    /// JSONPath expectations (the scenario DSL's `path` + predicates, on the arguments
    /// object: `{path: $.city, equals: Boston}`).
    #[serde(default)]
    pub args: Vec<At<Expectation>>,
    /// With `calls`: weighted per-argument critics. The best-scoring call of the tool gets
    /// an argument score (the weight of the critics that match over the total weight),
    /// recorded per trial; the expectation passes when it reaches `threshold`.
    #[serde(default)]
    pub critics: Vec<At<CriticDoc>>,
    /// With `critics`: the argument score a call needs, 0 to 1 (default 1: every critic
    /// matches).
    #[serde(default)]
    pub threshold: Option<At<f64>>,
    /// With `critics`: a passing score below this (at least `threshold`, at most 1) passes
    /// with a warning (the warn band).
    #[serde(default)]
    pub warn_threshold: Option<At<f64>>,
    /// These tools are called in this order (other calls may come between them).
    #[serde(default)]
    pub order: Option<Vec<At<String>>>,
    /// `true`: the model calls no tool at all.
    #[serde(default)]
    pub no_tool_call: Option<bool>,
    /// A predicate on the final answer text.
    #[serde(default)]
    pub answer: Option<At<AnswerDoc>>,
    /// At most this many tool calls.
    #[serde(default)]
    pub max_tool_calls: Option<u32>,
}

/// A predicate on the final answer; exactly one key.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnswerDoc {
    /// The answer contains this text.
    #[serde(default)]
    pub contains: Option<String>,
    /// The answer does not contain this text.
    #[serde(default)]
    pub not_contains: Option<String>,
    /// The answer matches this regular expression (Rust `regex` syntax).
    #[serde(default)]
    pub matches: Option<At<String>>,
    /// The answer, trimmed, equals this.
    #[serde(default)]
    pub equals: Option<String>,
    /// A rubric a judge model grades the answer against (the set's `judge` profile, or
    /// `--judge`): it returns a score from 0 to 1 and a reason, both recorded per trial.
    #[serde(default)]
    pub judge: Option<At<String>>,
    /// With `judge`: the score the answer needs, 0 to 1 (default 0.7).
    #[serde(default)]
    pub threshold: Option<At<f64>>,
    /// With `judge`: a passing score below this (at least `threshold`, at most 1) passes
    /// with a warning (the warn band).
    #[serde(default)]
    pub warn_threshold: Option<At<f64>>,
}

/// One argument critic: the argument (`path`, a JSONPath on the arguments object) and
/// exactly one of `exact`, `number`, `similar`, `similarWords`, `datetime`, `oneOf`,
/// `judge`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CriticDoc {
    /// Where the argument is, e.g. `$.city` (its first match is scored; none: no match).
    pub path: At<String>,
    /// The argument equals this JSON value (numbers compare by value: 2 equals 2.0).
    #[serde(default)]
    pub exact: Option<TValue>,
    /// The argument is a number within `tolerance` of this.
    #[serde(default)]
    pub number: Option<f64>,
    /// With `number`: the largest accepted difference (default 0).
    #[serde(default)]
    pub tolerance: Option<At<f64>>,
    /// The argument is a string similar to this: 1 − edit distance / longer length,
    /// ignoring case and runs of white space, reaches `threshold`.
    #[serde(default)]
    pub similar: Option<String>,
    /// The argument is a string whose words are similar to these, in any order: the
    /// `similar` measure on each side's words sorted ("Boston weather" matches
    /// "weather in Boston" at 0.8).
    #[serde(default)]
    pub similar_words: Option<String>,
    /// With `similar` or `similarWords`: the similarity needed, 0 to 1 (default 0.8); with
    /// `judge`: the judge's score needed (default 0.7).
    #[serde(default)]
    pub threshold: Option<At<f64>>,
    /// The argument is a date or date-time at the same instant as this (RFC 3339, e.g.
    /// `2026-03-01T09:30:00Z`; a date alone is its midnight UTC, a date-time without an
    /// offset is UTC), within `within`.
    #[serde(default)]
    pub datetime: Option<At<String>>,
    /// With `datetime`: the largest accepted difference, e.g. `1h`, `1day` (default 0).
    #[serde(default)]
    pub within: Option<At<String>>,
    /// The argument equals one of these values.
    #[serde(default)]
    pub one_of: Option<Vec<TValue>>,
    /// A criterion in plain words the judge model grades the argument's value against (the
    /// set's `judge` profile, or `--judge`): it returns a score from 0 to 1 and a reason,
    /// recorded per trial; the critic matches when the score reaches `threshold`. Its
    /// requests count in the judge's cost and under `--max-cost`.
    #[serde(default)]
    pub judge: Option<At<String>>,
    /// How much this argument counts in the call's score (default 1; more than 0).
    #[serde(default)]
    pub weight: Option<At<f64>>,
}
