//! Judged answers: `answer: {judge: RUBRIC}` graded by a judge model — any profile of the
//! set, possibly another API than the model under test. The judge is sent the task, the
//! tool calls the model made and its final answer, with the rubric, and asked for a JSON
//! verdict `{"score": 0..1, "reason": "…"}`; the expectation passes when the score reaches
//! its threshold. A judge that cannot give a verdict (timeout, an API error after retries,
//! a reply that is not that JSON) makes the expectation an error with the reason: never a
//! pass. The judge's tokens are counted apart from the model's, and its requests spend from
//! the same `--max-cost` budget.

use serde_json::Value;

use super::conversation::{ApiError, Msg, TurnAt};
use super::llm::ModelClient;
use super::profile::Profile;
use super::results::{ExpectationOutcome, JudgeVerdict, ToolCallRecord, TrialResult, Usage};
use super::set::{Answer, Role, Task, TaskExpectation};
use super::tape::Tape;

/// Longest answer, tool-call line and task text sent to the judge.
const MAX_ANSWER_CHARS: usize = 8000;
const MAX_CALL_CHARS: usize = 500;
/// Longest reason kept in the results.
const MAX_REASON_CHARS: usize = 500;

/// What the judge is told to do; the reply format is part of it.
pub const SYSTEM: &str = "You grade an AI assistant's final answer against a rubric. You are \
given the user's task (inside <task>), the tool calls the assistant made (inside <tool_calls>), \
its final answer (inside <answer>) and the rubric (inside <rubric>). Decide how well the answer \
meets the rubric. Reply with only a JSON object and no other text: {\"score\": S, \"reason\": \
\"R\"}, where S is a number from 0 (does not meet the rubric at all) to 1 (fully meets it) and \
R is one short sentence saying why.";

/// The judge of a run: its profile and client.
pub struct Judge {
    pub profile_name: String,
    pub profile: Profile,
    pub client: ModelClient,
}

/// The expectation's name in the results: the rubric, cut.
pub fn name(rubric: &str) -> String {
    format!(
        "answer judged: {:?}",
        crate::ground::redact::shorten(rubric.trim(), 80)
    )
}

/// The outcome of a judged answer before (or without) the judge: failed, no score.
pub fn pending(rubric: &str, threshold: f64, answered: bool) -> ExpectationOutcome {
    ExpectationOutcome {
        name: name(rubric),
        passed: false,
        message: Some(if answered {
            "not graded: the run has no judge".to_string()
        } else {
            "no final answer".to_string()
        }),
        threshold: Some(threshold),
        ..Default::default()
    }
}

/// The judge's prompt for one answer.
pub fn prompt(task: &Task, calls: &[ToolCallRecord], answer: &str, rubric: &str) -> String {
    let mut out = String::from("<task>\n");
    for (role, text) in &task.messages {
        let who = match role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out.push_str(&format!(
            "{who}: {}\n",
            crate::ground::redact::shorten(text, MAX_ANSWER_CHARS)
        ));
    }
    out.push_str("</task>\n<tool_calls>\n");
    if calls.is_empty() {
        out.push_str("(none)\n");
    }
    for c in calls {
        out.push_str(&crate::ground::redact::shorten(
            &format!("{} {}", c.name, c.arguments),
            MAX_CALL_CHARS,
        ));
        out.push('\n');
    }
    out.push_str(&format!(
        "</tool_calls>\n<answer>\n{}\n</answer>\n<rubric>\n{}\n</rubric>\n",
        crate::ground::redact::shorten(answer, MAX_ANSWER_CHARS),
        rubric.trim()
    ));
    out
}

/// The judge's reply as a verdict: a JSON object (alone, or alone in one ``` fence) with a
/// `score` from 0 to 1 and a non-empty `reason`.
pub fn parse_verdict(text: &str) -> Result<(f64, String), String> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    let excerpt = || crate::ground::redact::shorten(trimmed, 200);
    let value: Value = serde_json::from_str(inner).map_err(|_| {
        format!(
            "the judge's verdict is not the JSON object asked for: {:?}",
            excerpt()
        )
    })?;
    let score = value
        .get("score")
        .and_then(Value::as_f64)
        .filter(|s| (0.0..=1.0).contains(s))
        .ok_or_else(|| {
            format!(
                "the judge's verdict has no `score` from 0 to 1: {}",
                excerpt()
            )
        })?;
    let reason = value
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| format!("the judge's verdict has no `reason`: {}", excerpt()))?;
    Ok((
        score,
        crate::ground::redact::shorten(reason, MAX_REASON_CHARS),
    ))
}

impl Judge {
    /// Grade every judged answer of the task on this trial, in place (the outcomes come from
    /// [`super::agent::judge`], with [`pending`] where a judge is needed). `Err` only for
    /// what stops the run: the judge's API unreachable, refusing its key, or the budget.
    /// The judge's requests are recorded on (replayed from) `tape`, the model's.
    pub async fn grade(
        &self,
        tape: Option<&Tape>,
        task: &Task,
        out: &mut TrialResult,
        answer: Option<&str>,
    ) -> Result<(), ApiError> {
        let Some(answer) = answer else {
            return Ok(());
        };
        let (mut input, mut output, mut asked) = (0, 0, 0);
        for (i, e) in task.expect.iter().enumerate() {
            let TaskExpectation::Answer(Answer::Judge {
                rubric,
                threshold,
                warn,
            }) = e
            else {
                continue;
            };
            asked += 1;
            let msgs = [Msg::User(prompt(task, &out.tool_calls, answer, rubric))];
            let at = TurnAt {
                task: &task.id,
                trial: out.index,
                turn: asked,
                judge: true,
                // The whole request is the question: a replay that differs asks another.
                set_messages: msgs.len(),
            };
            let verdict = match self
                .client
                .turn_on(tape, &at, Some(SYSTEM), &msgs, &[])
                .await
            {
                Ok(turn) => {
                    input += turn.input_tokens;
                    output += turn.output_tokens;
                    parse_verdict(turn.text.as_deref().unwrap_or(""))
                }
                Err(ApiError::Failed(why)) => Err(why),
                Err(fatal) => return Err(self.theirs(fatal)),
            };
            let mut verdict_record = JudgeVerdict {
                profile: self.profile_name.clone(),
                ..Default::default()
            };
            let o = &mut out.expectations[i];
            match verdict {
                Ok((score, reason)) => {
                    let passed = score + 1e-9 >= *threshold;
                    o.passed = passed;
                    o.message = (!passed)
                        .then(|| format!("judge score {score:.2} < {threshold:.2}: {reason}"));
                    o.score = Some(score);
                    o.warning = match warn {
                        Some(w) if passed && score + 1e-9 < *w => {
                            Some(format!("judge score {score:.2} < warnThreshold {w:.2}"))
                        }
                        _ => None,
                    };
                    verdict_record.score = Some(score);
                    verdict_record.reason = Some(reason);
                }
                Err(why) => {
                    o.passed = false;
                    o.message = Some(format!("judge error: {why}"));
                    verdict_record.error = Some(why);
                }
            }
            o.judge = Some(verdict_record);
        }
        if asked > 0 {
            out.judge_usage = Some(Usage::sum([(input, output)], self.profile.price));
        }
        Ok(())
    }

    /// A run-stopping error of the judge's API, said as the judge's.
    fn theirs(&self, e: ApiError) -> ApiError {
        let say = |m: String| format!("the judge (profile `{}`): {m}", self.profile_name);
        match e {
            ApiError::Unreachable(m) => ApiError::Unreachable(say(m)),
            ApiError::Auth(m) => ApiError::Auth(say(m)),
            ApiError::Failed(m) => ApiError::Failed(say(m)),
            ApiError::Budget(m) => ApiError::Budget(say(m)),
            // Already says it is the replay's judge turn.
            ApiError::Replay(m) => ApiError::Replay(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_strict_json_with_a_score_and_a_reason() {
        assert_eq!(
            parse_verdict(r#"{"score": 0.8, "reason": "names Boston"}"#),
            Ok((0.8, "names Boston".to_string()))
        );
        assert_eq!(
            parse_verdict("```json\n{\"score\": 1, \"reason\": \"ok\"}\n```"),
            Ok((1.0, "ok".to_string()))
        );
        for (reply, why) in [
            (
                "The answer looks fine to me.",
                "not the JSON object asked for",
            ),
            ("", "not the JSON object asked for"),
            (r#"{"score": 1.5, "reason": "x"}"#, "no `score` from 0 to 1"),
            (
                r#"{"score": "high", "reason": "x"}"#,
                "no `score` from 0 to 1",
            ),
            (r#"{"reason": "x"}"#, "no `score` from 0 to 1"),
            (r#"{"score": 0.5}"#, "no `reason`"),
            (r#"{"score": 0.5, "reason": "  "}"#, "no `reason`"),
            ("[0.5]", "no `score`"),
        ] {
            let e = parse_verdict(reply).expect_err(reply);
            assert!(e.contains(why), "{reply}: {e}");
        }
    }
}
