//! The scored parts of a trial's results: how each argument critic judged the scored tool
//! call, and a judge model's verdict on the final answer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One argument critic on the call that was scored (the best-scoring call of the tool).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CriticOutcome {
    /// The argument's JSONPath, e.g. `$.city`.
    pub path: String,
    /// The critic and what it expects, e.g. `exact "Boston"`, `number 3 ± 0.5`.
    pub critic: String,
    pub weight: f64,
    /// The argument satisfied the critic (it then adds its weight to the score).
    pub matched: bool,
    /// The argument's value, cut; absent when the path matched nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
    /// Why it matched or not: `similarity 0.83 ≥ 0.80`, `off by 2 (tolerance 0.5)`, `absent`,
    /// `judge score 0.90 ≥ 0.70: REASON`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// A `judge` critic: the judge model's verdict on the argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeVerdict>,
}

/// A judge model's verdict on one answer: its score and reason, or why there is none.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JudgeVerdict {
    /// The judge's model profile.
    pub profile: String,
    /// 0 (does not meet the rubric) to 1 (fully meets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The judge's one-sentence reason, redacted and cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why the judgement failed (timeout, an API error after retries, a verdict that is not
    /// the JSON asked for): the expectation then fails as an error, never passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
