//! `eval run --replay DIR`: the model's answers come from a recording ([`super::record`]),
//! so a set re-runs against a new build of the server with no key, no network to a model
//! and no cost. What the replay cannot stand for is a setup error (exit 2), said once:
//! - the tools the model would be sent differ from the recorded ones (`toolsHash`): the
//!   recorded answers were given to other tools;
//! - a trial asks for a model turn the recording lacks (another task, trial or turn), or
//!   asks it another question (the set's messages, the system prompt or the profile's
//!   parameters changed).
//!
//! The server's own answers are re-run for real: a tool result that differs from the
//! recorded one means the recorded answers no longer follow from it, and fails that trial.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::conversation::{ApiError, TurnAt};
use super::record::{MANIFEST, Manifest, RECORDING_FORMAT, TaskRecording, redacted, task_path};
use super::replay_match::{excerpts, same, same_but_volatile, tools_as_set};
use super::results::ModelApi;
use crate::language::dsl::scenario::expect::SanitizerSpec;

/// The recording of one profile, loaded.
pub struct Replayer {
    dir: PathBuf,
    profile: String,
    complete: bool,
    /// The set's `sanitize`: what a tool result may differ in.
    sanitizers: Vec<SanitizerSpec>,
    tasks: HashMap<String, TaskRecording>,
}

/// How to make a recording fit again.
fn rerecord(dir: &Path) -> String {
    format!(
        "if the change is intended, re-record: run the same `eval run` with `--record {}` instead of `--replay` (with the model and its key)",
        dir.display()
    )
}

impl Replayer {
    /// Load `profile`'s recording from `dir` and check that it answers for these tools
    /// (`sent`: the tool list as the model is sent it, `tools_hash` its hash); tool results
    /// are compared through `sanitizers`.
    pub fn open(
        dir: &Path,
        set: &str,
        profile: &str,
        tools_hash: &str,
        sent: &[Value],
        sanitizers: &[SanitizerSpec],
    ) -> Result<Replayer, String> {
        let shown = dir.display();
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "--replay {shown}: no recording there ({}: {e}); make one with `--record {shown}`",
                path.display()
            )
        })?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
            format!(
                "--replay {}: not a recording ({e}); make one with `--record {shown}`",
                path.display()
            )
        })?;
        if manifest.format != RECORDING_FORMAT {
            return Err(format!(
                "--replay {}: unsupported recording format `{}`: this mcpspec reads {RECORDING_FORMAT}; {}",
                path.display(),
                manifest.format,
                rerecord(dir)
            ));
        }
        if manifest.set != set {
            return Err(format!(
                "--replay {shown}: the recording is of eval set `{}`, not `{set}`",
                manifest.set
            ));
        }
        let Some(entry) = manifest.profiles.get(profile) else {
            let known: Vec<&str> = manifest.profiles.keys().map(String::as_str).collect();
            return Err(format!(
                "--replay {shown}: no recording of model profile `{profile}` (it has: {}); record it with `--record {shown} --model {profile}`",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        // The same tools in another order are the same question to the model (the request's
        // tools are compared as a set too).
        if entry.tools_hash != tools_hash && !same_set(&entry.tools, sent) {
            return Err(format!(
                "--replay {shown}: the tools the model would be sent differ from the recording (profile `{profile}`, toolsHash {} → {}): {}. The recorded answers were given to other tools and cannot stand for this server's; {}",
                short(&entry.tools_hash),
                short(tools_hash),
                tools_changed(&entry.tools, sent),
                rerecord(dir)
            ));
        }
        let mut tasks = HashMap::new();
        for id in &entry.tasks {
            let path = task_path(dir, profile, id);
            let doc: TaskRecording = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
                .map_err(|e| {
                    format!(
                        "--replay: cannot read {}: {e}; {}",
                        path.display(),
                        rerecord(dir)
                    )
                })?;
            tasks.insert(id.clone(), doc);
        }
        Ok(Replayer {
            dir: dir.to_path_buf(),
            profile: profile.to_string(),
            complete: entry.complete,
            sanitizers: sanitizers.to_vec(),
            tasks,
        })
    }

    /// The recorded reply for the turn at `at`, whose request body is `body`.
    pub fn answer(
        &self,
        at: &TurnAt<'_>,
        body: &Value,
        api: ModelApi,
        has_system: bool,
    ) -> Result<Value, ApiError> {
        let lacks = |what: String| {
            ApiError::Replay(format!(
                "replay: the recording in {} (profile `{}`) has no {what}: the set changed since it was recorded{}; {}",
                self.dir.display(),
                self.profile,
                if self.complete {
                    ""
                } else {
                    ", or the recorded run stopped early (the recording is marked incomplete)"
                },
                rerecord(&self.dir)
            ))
        };
        let task = self
            .tasks
            .get(at.task)
            .ok_or_else(|| lacks(format!("task `{}`", at.task)))?;
        let trial = task
            .trials
            .iter()
            .find(|t| t.index == at.trial)
            .ok_or_else(|| {
                lacks(format!(
                    "trial {} of task `{}` (it recorded {} trial(s))",
                    at.trial,
                    at.task,
                    task.trials.len()
                ))
            })?;
        let who = if at.judge { "judge" } else { "model" };
        let exchange = trial
            .turns
            .iter()
            .find(|x| x.turn == at.turn && x.judge == at.judge)
            .ok_or_else(|| {
                lacks(format!(
                    "{who} turn {} of trial {} of task `{}` (the recorded trial took {} model turn(s) and {} judge turn(s))",
                    at.turn,
                    at.trial,
                    at.task,
                    trial.turns.iter().filter(|x| !x.judge).count(),
                    trial.turns.iter().filter(|x| x.judge).count(),
                ))
            })?;
        // Messages before this index come from the set (OpenAI carries the system prompt
        // as the first message).
        let from_set = at.set_messages + usize::from(api == ModelApi::Openai && has_system);
        let now = redacted(&super::fence::neutral(body, at.fence));
        match difference(&exchange.request, &now, from_set, &self.sanitizers) {
            None => {}
            Some(Difference::Question(what)) => {
                return Err(ApiError::Replay(format!(
                    "replay: task `{}` trial {} asks the {who} another question at turn {} than the recording in {} (profile `{}`): {what}. The set or the profile changed since it was recorded; {}",
                    at.task,
                    at.trial,
                    at.turn,
                    self.dir.display(),
                    self.profile,
                    rerecord(&self.dir)
                )));
            }
            Some(Difference::ServerAnswer { recorded, now }) => {
                return Err(ApiError::Failed(format!(
                    "replay: the server's tool results differ from the recording before model turn {}: recorded {recorded}, now {now}; the recorded model answers no longer follow from them ({})",
                    at.turn,
                    rerecord(&self.dir)
                )));
            }
        }
        match (&exchange.reply, &exchange.error) {
            (Some(reply), _) => Ok(reply.clone()),
            (None, Some(why)) => Err(ApiError::Failed(why.clone())),
            (None, None) => Err(lacks(format!(
                "reply at {who} turn {} of trial {} of task `{}`",
                at.turn, at.trial, at.task
            ))),
        }
    }
}

/// How a replayed request differs from the recorded one.
#[derive(Debug, PartialEq)]
enum Difference {
    /// In what the set or the profile decides (parameters, system prompt, the task's
    /// messages): another question.
    Question(String),
    /// In a message after the set's: a tool result the server gave.
    ServerAnswer { recorded: String, now: String },
}

/// The first difference between two request bodies; `from_set` messages come from the set,
/// the server's tool results are compared through `sanitizers`.
fn difference(
    recorded: &Value,
    now: &Value,
    from_set: usize,
    sanitizers: &[SanitizerSpec],
) -> Option<Difference> {
    let empty = serde_json::Map::new();
    let (a, b) = (
        recorded.as_object().unwrap_or(&empty),
        now.as_object().unwrap_or(&empty),
    );
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys.into_iter().filter(|k| *k != "messages") {
        let (x, y) = if key == "tools" {
            (tools_as_set(a.get(key)), tools_as_set(b.get(key)))
        } else {
            (a.get(key).cloned(), b.get(key).cloned())
        };
        let equal = match (&x, &y) {
            (Some(x), Some(y)) => same(x, y),
            (x, y) => x == y,
        };
        if !equal {
            let (r, n) = excerpts(x.as_ref(), y.as_ref());
            return Some(Difference::Question(format!(
                "`{key}` is {r} in the recording and {n} now"
            )));
        }
    }
    let none = Vec::new();
    let list = |m: &serde_json::Map<String, Value>| {
        m.get("messages")
            .and_then(Value::as_array)
            .unwrap_or(&none)
            .clone()
    };
    let (ra, rb) = (list(a), list(b));
    let i = (0..ra.len().max(rb.len())).find(|&i| match (ra.get(i), rb.get(i)) {
        (Some(x), Some(y)) if i < from_set => !same(x, y),
        (Some(x), Some(y)) => !same_but_volatile(x, y, sanitizers),
        _ => true,
    })?;
    let (r, n) = excerpts(ra.get(i), rb.get(i));
    if i < from_set {
        Some(Difference::Question(format!(
            "message {} (from the set: the system prompt, the task's prompt or messages) is {r} in the recording and {n} now",
            i + 1,
        )))
    } else {
        Some(Difference::ServerAnswer {
            recorded: r,
            now: n,
        })
    }
}

/// The two sent tool lists hold the same tools, whatever their order.
fn same_set(recorded: &[Value], now: &[Value]) -> bool {
    let set = |l: &[Value]| tools_as_set(Some(&Value::Array(l.to_vec())));
    recorded.len() == now.len() && set(recorded) == set(now)
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// Which tools differ between two sent tool lists: added, removed, changed (and in what).
fn tools_changed(recorded: &[Value], now: &[Value]) -> String {
    let name = |t: &Value| {
        t.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let by_name = |list: &[Value]| -> Vec<(String, Value)> {
        list.iter().map(|t| (name(t), t.clone())).collect()
    };
    let (old, new) = (by_name(recorded), by_name(now));
    let find = |list: &[(String, Value)], n: &str| {
        list.iter().find(|(m, _)| m == n).map(|(_, v)| v.clone())
    };
    let mut parts = Vec::new();
    for (n, v) in &new {
        match find(&old, n) {
            None => parts.push(format!("added `{n}`")),
            Some(o) if &o != v => {
                let fields: Vec<&str> = ["description", "inputSchema"]
                    .into_iter()
                    .filter(|f| o.get(*f) != v.get(*f))
                    .collect();
                parts.push(format!("`{n}` changed ({})", fields.join(", ")));
            }
            Some(_) => {}
        }
    }
    for (n, _) in &old {
        if find(&new, n).is_none() {
            parts.push(format!("removed `{n}`"));
        }
    }
    if parts.is_empty() {
        "the same tools in another order".into()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_difference_is_the_sets_question_or_the_servers_answer() {
        let body = |temp: f64, prompt: &str, result: &str| {
            json!({"model": "m", "temperature": temp, "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": null},
                {"role": "tool", "content": result}]})
        };
        let rec = body(0.0, "weather in Boston?", "sunny");
        assert_eq!(difference(&rec, &rec, 2, &[]), None);
        let Some(Difference::Question(q)) =
            difference(&rec, &body(0.5, "weather in Boston?", "sunny"), 2, &[])
        else {
            panic!()
        };
        assert!(
            q.starts_with("`temperature` is 0.0 in the recording and 0.5 now"),
            "{q}"
        );
        assert!(matches!(
            difference(&rec, &body(0.0, "weather in Paris?", "sunny"), 2, &[]),
            Some(Difference::Question(q)) if q.starts_with("message 2 (from the set")
        ));
        assert!(matches!(
            difference(&rec, &body(0.0, "weather in Boston?", "rain"), 2, &[]),
            Some(Difference::ServerAnswer { recorded, now }) if recorded.contains("sunny") && now.contains("rain")
        ));
    }

    #[test]
    fn changed_tools_are_named() {
        let t = |n: &str, d: &str| json!({"name": n, "description": d, "inputSchema": {}});
        assert_eq!(
            tools_changed(&[t("a", "x"), t("b", "y")], &[t("a", "z"), t("c", "w")]),
            "`a` changed (description); added `c`; removed `b`"
        );
        assert_eq!(
            tools_changed(&[t("a", "x"), t("b", "y")], &[t("b", "y"), t("a", "x")]),
            "the same tools in another order"
        );
    }
}
