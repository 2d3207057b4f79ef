//! One trial: the agent loop from the task's messages to a final answer — model turn,
//! the model's tool calls executed on the MCP server over the run's [`Connection`], the
//! results fed back — then the task's expectations judged on what happened.

use std::time::Instant;

use serde_json::{Value, json};

use super::conversation::{ApiError, Call, Msg, ToolSpec, TurnAt};
use super::llm::ModelClient;
use super::names::Names;
use super::results::{ExpectationOutcome, ToolCallRecord, TrialResult};
use super::set::doc::Role;
use super::set::{Answer, Task, TaskExpectation};
use crate::protocol::methods;
use crate::run::client::Connection;

/// Longest final answer kept in the results.
const MAX_ANSWER_CHARS: usize = 2000;
/// Longest tool result text sent back to the model.
const MAX_RESULT_CHARS: usize = 32 * 1024;

/// What every trial of a run shares.
pub struct Agent<'a> {
    pub client: &'a ModelClient,
    pub tools: &'a [ToolSpec],
    pub names: &'a Names,
    pub system: Option<&'a str>,
    pub max_turns: u32,
    /// Most tool calls one model reply may ask for (`maxCallsPerTurn`).
    pub max_calls_per_turn: u32,
    /// Grades `answer: {judge: …}` expectations.
    pub judge: Option<&'a super::judge::Judge>,
}

/// A trial cut short by what stops the whole run: why, and the trial as far as it went
/// (its tokens were spent: the run's usage keeps them, its outcome is none).
pub struct Cut {
    pub error: ApiError,
    pub trial: TrialResult,
}

impl Agent<'_> {
    /// Run one trial. `Err` only for what stops the whole run (the model API unreachable,
    /// or refusing the key, the budget); everything else fails this trial with its reason.
    pub async fn trial(
        &self,
        conn: &mut Connection,
        task: &Task,
        index: u32,
    ) -> Result<TrialResult, Cut> {
        let started = Instant::now();
        let mut msgs: Vec<Msg> = task
            .messages
            .iter()
            .map(|(role, text)| match role {
                Role::User => Msg::User(text.clone()),
                Role::Assistant => Msg::Assistant {
                    text: Some(text.clone()),
                    calls: Vec::new(),
                },
            })
            .collect();
        let mut out = TrialResult {
            index,
            success: false,
            expectations: Vec::new(),
            tool_calls: Vec::new(),
            tool_errors: 0,
            input_tokens: 0,
            output_tokens: 0,
            estimated_tokens: false,
            turns: 0,
            retries: 0,
            latency_ms: 0,
            final_answer: None,
            error: None,
            argument_score: None,
            judge_usage: None,
        };
        let mut final_text: Option<String> = None;
        'turns: while out.turns < self.max_turns {
            out.turns += 1;
            let at = TurnAt {
                task: &task.id,
                trial: index,
                turn: out.turns,
                judge: false,
                set_messages: task.messages.len(),
                fence: None,
            };
            let (turn, retries) = self
                .client
                .turn_counted(&at, self.system, &msgs, self.tools)
                .await;
            let turn = match turn {
                Ok(t) => t,
                Err(ApiError::Failed(why)) => {
                    // The retries a failed request spent are part of what happened.
                    out.retries += retries;
                    out.error = Some(why);
                    break;
                }
                Err(error) => {
                    out.latency_ms = started.elapsed().as_millis() as u64;
                    return Err(Cut { error, trial: out });
                }
            };
            out.input_tokens += turn.input_tokens;
            out.output_tokens += turn.output_tokens;
            out.retries += turn.retries;
            out.estimated_tokens |= turn.estimated;
            if turn.calls.is_empty() {
                final_text = Some(turn.text.unwrap_or_default());
                break;
            }
            if turn.calls.len() > self.max_calls_per_turn as usize {
                out.error = Some(format!(
                    "the model asked for {} tool calls in one reply, more than maxCallsPerTurn ({}): none was executed",
                    turn.calls.len(),
                    self.max_calls_per_turn
                ));
                break;
            }
            let mut results = Vec::new();
            for call in &turn.calls {
                match self.execute(conn, call).await {
                    Ok((record, text)) => {
                        let failed = record.is_error || record.protocol_error.is_some();
                        out.tool_errors += u32::from(failed);
                        results.push((call.id.clone(), text, failed));
                        out.tool_calls.push(record);
                    }
                    Err((record, why)) => {
                        // An unknown tool and malformed arguments alike: a call that failed.
                        out.tool_errors += 1;
                        out.tool_calls.push(record);
                        out.error = Some(why);
                        break 'turns;
                    }
                }
            }
            msgs.push(Msg::Assistant {
                text: turn.text,
                calls: turn.calls,
            });
            msgs.push(Msg::ToolResults(results));
        }
        if final_text.is_none() && out.error.is_none() {
            out.error = Some(format!(
                "no final answer after {} model turns (maxTurns): the model kept calling tools",
                out.turns
            ));
        }
        out.final_answer = final_text
            .as_deref()
            .map(|t| crate::ground::redact::shorten(t, MAX_ANSWER_CHARS));
        out.expectations = judge(task, &out.tool_calls, final_text.as_deref());
        // The trial's latency is the model's and the tools', not the judge's.
        out.latency_ms = started.elapsed().as_millis() as u64;
        if let Some(j) = self.judge
            && let Err(error) = j
                .grade(self.client.tape(), task, &mut out, final_text.as_deref())
                .await
        {
            return Err(Cut { error, trial: out });
        }
        out.argument_score = task.argument_score(&out.expectations);
        // Judged on the whole arguments; stored within the cap.
        for c in &mut out.tool_calls {
            c.arguments = super::caps::stored_arguments(std::mem::take(&mut c.arguments));
        }
        out.success = out.error.is_none() && out.expectations.iter().all(|e| e.passed);
        Ok(out)
    }

    /// Execute one tool call on the server: the record and the text for the model, or the
    /// record and why the trial must stop (unknown tool, malformed arguments).
    async fn execute(
        &self,
        conn: &mut Connection,
        call: &Call,
    ) -> Result<(ToolCallRecord, String), (ToolCallRecord, String)> {
        let Some(name) = self.names.to_mcp(&call.name) else {
            let record = ToolCallRecord {
                name: call.name.clone(),
                arguments: call.arguments.clone().unwrap_or(Value::Null),
                is_error: false,
                protocol_error: Some("unknown tool: not in the server's tool list".into()),
            };
            return Err((
                record,
                format!(
                    "the model called an unknown tool `{}` (not in the server's tool list)",
                    crate::ground::redact::shorten(&call.name, 100)
                ),
            ));
        };
        let arguments = match &call.arguments {
            Ok(a) => a.clone(),
            Err((raw, why)) => {
                let record = ToolCallRecord {
                    name: name.to_string(),
                    arguments: Value::Null,
                    is_error: false,
                    protocol_error: Some(format!("not sent to the server: {why}")),
                };
                return Err((
                    record,
                    format!(
                        "malformed tool-call arguments for `{name}`: {why}: {}",
                        crate::ground::redact::shorten(raw, 200)
                    ),
                ));
            }
        };
        let params = json!({ "name": name, "arguments": arguments });
        let (is_error, protocol_error, text) =
            match conn.call(methods::TOOLS_CALL, Some(params)).await {
                Ok(result) => {
                    let is_error = crate::protocol::fields::is_error(&result);
                    (is_error, None, result_text(&result))
                }
                Err(e) => (false, Some(e.clone()), e),
            };
        Ok((
            ToolCallRecord {
                name: name.to_string(),
                arguments,
                is_error,
                protocol_error,
            },
            crate::ground::redact::shorten(&text, MAX_RESULT_CHARS),
        ))
    }
}

/// A `tools/call` result as text for the model: its text blocks, else the structured
/// content serialized, else the whole result.
fn result_text(result: &Value) -> String {
    let texts: Vec<&str> = crate::protocol::fields::text_blocks(result).collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    match crate::protocol::fields::structured_content(result) {
        Some(s) => s.to_string(),
        None => result.to_string(),
    }
}

/// Every expectation of the task on one trial's calls and answer.
pub fn judge(
    task: &Task,
    calls: &[ToolCallRecord],
    answer: Option<&str>,
) -> Vec<ExpectationOutcome> {
    let called: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    let called_list = if called.is_empty() {
        "no tool was called".to_string()
    } else {
        format!("called: {}", called.join(", "))
    };
    task.expect
        .iter()
        .map(|e| {
            let (name, failure) = match e {
                TaskExpectation::Calls {
                    tool,
                    args,
                    critics,
                } => {
                    let name = format!("calls {tool}");
                    let of_tool: Vec<&ToolCallRecord> =
                        calls.iter().filter(|c| &c.name == tool).collect();
                    if let Some(critics) = critics {
                        // Scored on the calls that satisfy the hard `args`.
                        let fitting = super::critics::fitting(args, &of_tool);
                        let none = if of_tool.is_empty() {
                            called_list.clone()
                        } else {
                            format!("no call of {tool} had matching arguments")
                        };
                        // `judge` critics are graded afterwards (see `super::judge`).
                        return critics.outcome(name, &fitting, none, &Default::default());
                    }
                    let failure = if of_tool.is_empty() {
                        Some(called_list.clone())
                    } else if args.is_empty() {
                        None
                    } else {
                        // Some call of the tool satisfies every argument predicate.
                        let mut first_miss = None;
                        let hit = of_tool.iter().any(|c| {
                            match args
                                .iter()
                                .find_map(|x| super::critics::arg_failure(x, &c.arguments))
                            {
                                None => true,
                                Some(why) => {
                                    first_miss.get_or_insert(why);
                                    false
                                }
                            }
                        });
                        (!hit).then(|| {
                            format!(
                                "no call of {tool} had matching arguments: {}",
                                first_miss.unwrap_or_default()
                            )
                        })
                    };
                    (name, failure)
                }
                TaskExpectation::Order(list) => {
                    let mut rest = called.iter();
                    let in_order = list.iter().all(|want| rest.any(|c| c == want));
                    (
                        format!("order {}", list.join(" → ")),
                        (!in_order).then(|| called_list.clone()),
                    )
                }
                TaskExpectation::NoToolCall(want) => {
                    let ok = called.is_empty() == *want;
                    (
                        if *want {
                            "noToolCall".to_string()
                        } else {
                            "some tool call".to_string()
                        },
                        (!ok).then(|| called_list.clone()),
                    )
                }
                TaskExpectation::MaxToolCalls(max) => (
                    format!("maxToolCalls {max}"),
                    (calls.len() as u32 > *max).then(|| format!("{} calls", calls.len())),
                ),
                TaskExpectation::Answer(Answer::Judge {
                    rubric, threshold, ..
                }) => {
                    // Graded afterwards by the run's judge (see `super::judge`).
                    return super::judge::pending(rubric, *threshold, answer.is_some());
                }
                TaskExpectation::Answer(a) => {
                    let (name, ok) = match (a, answer) {
                        (Answer::Contains(s), Some(t)) => {
                            (format!("answer contains {s:?}"), t.contains(s.as_str()))
                        }
                        (Answer::NotContains(s), Some(t)) => (
                            format!("answer does not contain {s:?}"),
                            !t.contains(s.as_str()),
                        ),
                        (Answer::Matches(r), Some(t)) => {
                            (format!("answer matches /{}/", r.as_str()), r.is_match(t))
                        }
                        (Answer::Equals(s), Some(t)) => {
                            (format!("answer equals {s:?}"), t.trim() == s.as_str())
                        }
                        // (A judged answer returned above.)
                        (a @ Answer::Judge { .. }, Some(_)) | (a, None) => (answer_name(a), false),
                    };
                    let failure = (!ok).then(|| match answer {
                        Some(t) => format!("answer: {}", crate::ground::redact::shorten(t, 200)),
                        None => "no final answer".to_string(),
                    });
                    (name, failure)
                }
            };
            ExpectationOutcome {
                name,
                passed: failure.is_none(),
                message: failure,
                ..Default::default()
            }
        })
        .collect()
}

fn answer_name(a: &Answer) -> String {
    match a {
        Answer::Contains(s) => format!("answer contains {s:?}"),
        Answer::NotContains(s) => format!("answer does not contain {s:?}"),
        Answer::Matches(r) => format!("answer matches /{}/", r.as_str()),
        Answer::Equals(s) => format!("answer equals {s:?}"),
        Answer::Judge { rubric, .. } => super::judge::name(rubric),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::eval::set::EvalSet;

    fn task(expect: &str) -> Task {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.eval.yaml");
        std::fs::write(
            &path,
            format!("evalset: t\ntasks:\n  - id: a\n    prompt: p\n    expect:\n{expect}"),
        )
        .unwrap();
        let set = EvalSet::load(&path).unwrap_or_else(|e| panic!("{}", e.render()));
        set.tasks.into_iter().next().unwrap()
    }

    fn call(name: &str, arguments: Value) -> ToolCallRecord {
        ToolCallRecord {
            name: name.into(),
            arguments,
            is_error: false,
            protocol_error: None,
        }
    }

    /// Each expectation kind passes on a matching trial and fails, with a reason, on
    /// another.
    #[test]
    fn every_expectation_kind_can_pass_and_fail() {
        let t = task(concat!(
            "      - calls: get_weather\n",
            "        args: [ { path: \"$.city\", equals: Boston } ]\n",
            "      - order: [get_weather, add]\n",
            "      - maxToolCalls: 2\n",
            "      - answer: { contains: sunny }\n",
            "      - answer: { matches: \"^It\" }\n",
            "      - answer: { notContains: rain }\n",
        ));
        let good = [
            call("get_weather", json!({"city": "Boston"})),
            call("add", json!({"a": 1, "b": 2})),
        ];
        let outcomes = judge(&t, &good, Some("It is sunny"));
        assert!(outcomes.iter().all(|o| o.passed), "{outcomes:#?}");
        let bad = [
            call("add", json!({})),
            call("get_weather", json!({"city": "Paris"})),
            call("echo", json!({})),
        ];
        let outcomes = judge(&t, &bad, Some("rain later"));
        let failed: Vec<(&str, &str)> = outcomes
            .iter()
            .filter(|o| !o.passed)
            .map(|o| (o.name.as_str(), o.message.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(failed.len(), 6, "{failed:#?}");
        assert!(
            failed[0]
                .1
                .starts_with("no call of get_weather had matching arguments")
        );
        assert!(failed[0].1.contains("Boston"), "{failed:?}");
        assert_eq!(failed[1].0, "order get_weather → add");
        assert_eq!(failed[2], ("maxToolCalls 2", "3 calls"));
        assert_eq!(failed[3].1, "answer: rain later");
        // No final answer fails every answer predicate.
        let outcomes = judge(&t, &good, None);
        assert_eq!(outcomes.iter().filter(|o| !o.passed).count(), 3);
        let t = task("      - noToolCall: true\n");
        assert!(judge(&t, &[], Some("hi"))[0].passed);
        let o = &judge(&t, &good, Some("hi"))[0];
        assert_eq!(
            (o.passed, o.message.as_deref()),
            (false, Some("called: get_weather, add"))
        );
    }
}
