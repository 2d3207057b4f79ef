//! The eval results file: what `mcpspec eval run` writes and `mcpspec eval compare` reads.
//!
//! One versioned JSON document per run. Everything a paired comparison needs is here: per task
//! and per trial the outcome, the tool calls, tool errors, tokens and latency, and the context the
//! run was made in (model, era, revision, server, the tool list it saw), so that `compare` can warn
//! when two runs differ in something other than the server. Keys never appear in it: the model's
//! base URL is recorded without credentials, and a profile's key only as the `env:VAR` it names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod scores;
pub mod selection;

pub use scores::{CriticOutcome, JudgeVerdict};

/// The `format` value of every results file this build writes; `compare` refuses other majors.
pub const RESULTS_FORMAT: &str = "mcpspec-eval-results/1";

/// One run of an eval set against one server through one model.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvalResults {
    /// Always [`RESULTS_FORMAT`].
    pub format: String,
    /// True when the run was interrupted (Ctrl-C) or stopped early: some tasks or trials are missing.
    #[serde(default)]
    pub partial: bool,
    /// Why the run stopped before its end (exit 3 or 4: the model API refused the key, could
    /// not be reached, or does not serve the model); the results hold what finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    pub set: SetInfo,
    pub model: ModelInfo,
    pub server: ServerInfo,
    /// RFC 3339 start time of the run.
    pub started: String,
    /// Wall time of the whole run.
    pub duration_ms: u64,
    /// The tasks in the order of the set (tasks filtered out by `--affected-by` are absent).
    pub tasks: Vec<TaskResult>,
    /// Tokens and estimated cost of the whole run (the model's; the judge's are apart).
    #[serde(default)]
    pub usage: Usage,
    /// The model that graded judged answers (`answer: {judge: …}`), when the run had any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<ModelInfo>,
    /// The judge's tokens and estimated cost (at the judge profile's `price`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_usage: Option<Usage>,
    /// Per tool, how precisely the model selected it across the run's trials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_selection: Vec<selection::ToolSelection>,
}

/// Which eval set ran.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetInfo {
    /// The set's `name`.
    pub name: String,
    pub kind: SetKind,
    /// The file it was loaded from, as given on the command line.
    pub file: String,
    /// The set-level default number of trials.
    pub trials: u32,
    /// When `--affected-by` selected tasks: the diff file and why each kept task was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affected_by: Option<String>,
}

/// `regression`: success is expected near 100% and runs first after a description edit;
/// `capability`: a harder set whose rate is tracked, not gated on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SetKind {
    #[default]
    Regression,
    Capability,
}

/// The model the run went through.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The profile name used (`--model PROFILE`).
    pub profile: String,
    pub api: ModelApi,
    /// The model name sent in requests.
    pub model: String,
    /// The endpoint's base URL, without userinfo or query.
    pub base_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The profile's prices, when it gives them (the costs below are estimated from them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// `--replay DIR`: the model's answers came from this recording (no request was made;
    /// tokens and costs are the recorded run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed_from: Option<String>,
}

/// Which wire API the model client spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModelApi {
    /// OpenAI-compatible Chat Completions (OpenAI, Azure, vLLM, llama.cpp, Ollama, LM Studio).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// The MCP server the tools came from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// `serverInfo.name` as the server reported it.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `legacy` or `modern`.
    pub era: String,
    /// The negotiated protocol revision (a date).
    pub revision: String,
    /// sha256 (hex) of the canonical JSON (sorted keys) of the tool list the model was sent;
    /// two runs with different hashes saw different tools.
    pub tools_hash: String,
    pub tool_count: u32,
}

/// A model's prices in USD per million tokens (a profile's `price`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million input (prompt) tokens.
    pub input: f64,
    /// USD per million output (completion) tokens.
    pub output: f64,
}

impl Price {
    /// The estimated cost in USD of these token counts.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.input + output_tokens as f64 * self.output) / 1e6
    }
}

/// Tokens spent (from the API's `usage`) and their estimated cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Estimated from the profile's `price`; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Some of these tokens are estimated from sizes (4 bytes a token): the model API
    /// reported no `usage` for them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl Usage {
    /// The sum over `trials`, priced with `price`.
    pub fn of<'a>(
        trials: impl IntoIterator<Item = &'a TrialResult>,
        price: Option<Price>,
    ) -> Usage {
        let mut estimated = false;
        let mut usage = Usage::sum(
            trials.into_iter().map(|t| {
                estimated |= t.estimated_tokens;
                (t.input_tokens, t.output_tokens)
            }),
            price,
        );
        usage.estimated = estimated;
        usage
    }

    /// The judge's usage over `trials` (none when no trial was judged), priced with `price`.
    pub fn of_judge<'a>(
        trials: impl IntoIterator<Item = &'a TrialResult>,
        price: Option<Price>,
    ) -> Option<Usage> {
        let mut estimated = false;
        let judged: Vec<(u64, u64)> = trials
            .into_iter()
            .filter_map(|t| t.judge_usage.as_ref())
            .map(|u| {
                estimated |= u.estimated;
                (u.input_tokens, u.output_tokens)
            })
            .collect();
        (!judged.is_empty()).then(|| Usage {
            estimated,
            ..Usage::sum(judged, price)
        })
    }

    /// `120 in / 30 out tokens · $0.0008`, `(estimated)` when some tokens are: for reports.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} in / {} out tokens",
            self.input_tokens, self.output_tokens
        );
        if let Some(c) = self.cost_usd {
            s.push_str(&format!(" · ${c:.4}"));
        }
        if self.estimated {
            s.push_str(" (estimated)");
        }
        s
    }

    /// Token counts (input, output) summed and priced.
    pub fn sum(tokens: impl IntoIterator<Item = (u64, u64)>, price: Option<Price>) -> Usage {
        let (mut input_tokens, mut output_tokens) = (0, 0);
        for (i, o) in tokens {
            input_tokens += i;
            output_tokens += o;
        }
        Usage {
            input_tokens,
            output_tokens,
            cost_usd: price.map(|p| p.cost(input_tokens, output_tokens)),
            estimated: false,
        }
    }
}

/// When a task with several trials passes (`pass:` of the set or the task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PassRule {
    /// Every trial succeeds (the default).
    #[default]
    All,
    /// More than half of the trials succeed.
    Majority,
}

impl PassRule {
    pub fn is_all(&self) -> bool {
        *self == PassRule::All
    }
}

/// One task of the set, with all its trials.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    pub id: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// The task expects no tool call at all.
    #[serde(default)]
    pub no_tool_call: bool,
    /// Tool names the task's expectations name (for `--affected-by` and for reading reports).
    #[serde(default)]
    pub expected_tools: Vec<String>,
    pub trials: Vec<TrialResult>,
    /// Tokens and estimated cost of this task's trials (those cut short included).
    #[serde(default)]
    pub usage: Usage,
    /// Trials the run's stop (`--max-cost`, `--max-duration`, the circuit breaker) cut
    /// short: no outcome, but their spend (model and judge) counts in `usage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<CutTrials>,
    /// The judge's tokens and estimated cost for this task's trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_usage: Option<Usage>,
    /// When the task passes: `all` trials (the default, not written) or a `majority`.
    #[serde(default, skip_serializing_if = "PassRule::is_all")]
    pub pass: PassRule,
}

/// The trials of a task the run's stop cut short.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CutTrials {
    /// Their 0-based indexes.
    pub trials: Vec<u32>,
    /// What they spent before the stop (the model's).
    pub usage: Usage,
    /// What the judge spent on them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_usage: Option<Usage>,
}

/// One trial: one agent loop from the prompt to a final answer (or a failure).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrialResult {
    /// 0-based trial index.
    pub index: u32,
    /// Every expectation passed and the loop ended with a final answer.
    pub success: bool,
    /// One entry per expectation of the task, in the task's order.
    #[serde(default)]
    pub expectations: Vec<ExpectationOutcome>,
    /// The tool calls the model made, in order.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallRecord>,
    /// Tool calls that ended in `isError: true` or a JSON-RPC error.
    pub tool_errors: u32,
    /// From the API's `usage` (summed over the turns); estimated from sizes when the API
    /// reported none (`estimatedTokens`).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Some turn's reply had no `usage`: its tokens are estimated (4 bytes a token).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated_tokens: bool,
    /// Model turns (requests to the model API).
    pub turns: u32,
    /// Model requests repeated after a 429 or 5xx (each after its backoff).
    #[serde(default)]
    pub retries: u32,
    /// Wall time of the trial, model and tool calls included.
    pub latency_ms: u64,
    /// The model's final text answer, redacted and cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// Why the trial failed outside its expectations: malformed tool-call JSON, an unknown tool,
    /// the turn limit, an API error after retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The weighted argument score (0 to 1) over the task's `critics`: each critic's weight
    /// counts when it matched, on the best-scoring call of its tool (0 when none was made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_score: Option<f64>,
    /// The judge's tokens and estimated cost for this trial's judged answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_usage: Option<Usage>,
}

/// The verdict of one expectation of a task on one trial.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpectationOutcome {
    /// A short description, e.g. `calls get_weather`, `noToolCall`, `answer contains "Boston"`.
    pub name: String,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A scored expectation's score, 0 to 1: the argument score of `calls` with `critics`,
    /// the judge's score of `answer: {judge: …}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The score it needed to pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Per-argument critics, on the call that was scored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critics: Vec<CriticOutcome>,
    /// The judge's verdict (or why there is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeVerdict>,
    /// Passed, but its score is below the `warnThreshold` (the warn band): why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// One tool call the model asked for and mcpspec executed on the server.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    /// The MCP tool name (after mapping back from the model-side name).
    pub name: String,
    /// The arguments as parsed; `null` when the model sent malformed JSON.
    pub arguments: Value,
    /// The result had `isError: true`.
    #[serde(default)]
    pub is_error: bool,
    /// Why the call failed without a result: a JSON-RPC error, an unknown tool, or
    /// arguments too malformed to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_error: Option<String>,
}

impl TaskResult {
    /// The task failed by its pass rule: a trial failed (`all`), or no more than half of
    /// its trials succeeded (`majority`). A task with no trial has not failed (it did not run).
    pub fn failed(&self) -> bool {
        match self.pass {
            PassRule::All => self.trials.iter().any(|t| !t.success),
            PassRule::Majority => {
                !self.trials.is_empty() && 2 * self.successes() as usize <= self.trials.len()
            }
        }
    }

    /// Trials that succeeded.
    pub fn successes(&self) -> u32 {
        self.trials.iter().filter(|t| t.success).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pass: PassRule, outcomes: &[bool]) -> TaskResult {
        let trials = outcomes
            .iter()
            .enumerate()
            .map(|(i, &success)| {
                serde_json::from_value(serde_json::json!({
                    "index": i, "success": success, "expectations": [], "toolCalls": [],
                    "toolErrors": 0, "inputTokens": 0, "outputTokens": 0, "turns": 1,
                    "retries": 0, "latencyMs": 0
                }))
                .expect("a trial")
            })
            .collect();
        TaskResult {
            id: "t".into(),
            tags: Vec::new(),
            no_tool_call: false,
            expected_tools: Vec::new(),
            trials,
            usage: Usage::default(),
            judge_usage: None,
            cut: None,
            pass,
        }
    }

    #[test]
    fn the_majority_rule_needs_more_than_half() {
        assert!(task(PassRule::All, &[true, true, false]).failed());
        assert!(!task(PassRule::Majority, &[true, true, false]).failed());
        assert!(task(PassRule::Majority, &[true, false]).failed());
        assert!(task(PassRule::Majority, &[true, false, false]).failed());
        assert!(
            !task(PassRule::Majority, &[]).failed(),
            "not run is not failed"
        );
    }
}
