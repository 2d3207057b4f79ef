//! `eval run --record DIR` / `--replay DIR`: every model turn goes through
//! [`ModelClient::turn_at`], which knows where the turn sits in the run (task, trial, turn).
//! Recording stores the request sent and the answer received ([`super::record`]); replay
//! answers from the recording without a request, a key or a cost ([`super::replay`]).

use super::llm::{ApiError, ModelClient, Msg, ToolSpec, Turn};
use super::record::Recorder;
use super::replay::Replayer;

/// What a client does besides (or instead of) asking the model.
pub enum Tape {
    Record(Recorder),
    Replay(Replayer),
}

/// Where a model turn sits in the run: the key of a recorded exchange.
#[derive(Debug, Clone, Copy)]
pub struct TurnAt<'a> {
    pub task: &'a str,
    /// 0-based trial index.
    pub trial: u32,
    /// 1-based model turn of the trial; for the judge, 1-based judged answer of the trial.
    pub turn: u32,
    /// A judge's request grading the trial's answer, not the model's turn.
    pub judge: bool,
    /// How many messages of the conversation come from the set (the task's prompt or
    /// messages): a request that differs there asks another question than the recording.
    pub set_messages: usize,
}

impl ModelClient {
    /// Record (or replay) the model turns of this client.
    pub fn with_tape(mut self, tape: Option<Tape>) -> ModelClient {
        self.tape = tape;
        self
    }

    pub fn tape(&self) -> Option<&Tape> {
        self.tape.as_ref()
    }

    /// One model turn at `at`: live, live and recorded, or replayed.
    pub async fn turn_at(
        &self,
        at: &TurnAt<'_>,
        system: Option<&str>,
        msgs: &[Msg],
        tools: &[ToolSpec],
    ) -> Result<Turn, ApiError> {
        self.turn_on(self.tape.as_ref(), at, system, msgs, tools)
            .await
    }

    /// One turn at `at` of this client, recorded on (or replayed from) `tape`: the judge's
    /// requests go on the tape of the model whose answers it grades.
    pub async fn turn_on(
        &self,
        tape: Option<&Tape>,
        at: &TurnAt<'_>,
        system: Option<&str>,
        msgs: &[Msg],
        tools: &[ToolSpec],
    ) -> Result<Turn, ApiError> {
        match tape {
            None => self.turn(system, msgs, tools).await,
            Some(Tape::Replay(replayer)) => {
                let body = self.body(system, msgs, tools);
                let reply = replayer.answer(at, &body, self.profile().api, system.is_some())?;
                // Nothing was sent: no retries, whatever the recorded run needed.
                self.accept(&reply, 0)
            }
            Some(Tape::Record(recorder)) => {
                let body = self.body(system, msgs, tools);
                self.check_budget(&body)?;
                let sent = self.send(&body).await;
                match &sent {
                    Ok((reply, retries)) => recorder.store(at, &body, Ok((reply, *retries))),
                    // A trial-level failure is part of what happened; a fatal one stops the
                    // run (the recording is then marked incomplete).
                    Err(ApiError::Failed(why)) => recorder.store(at, &body, Err(why)),
                    Err(_) => {}
                }
                let (reply, retries) = sent?;
                self.accept(&reply, retries)
            }
        }
    }
}

/// The tape of one profile's run: `--record DIR` (a recorder for this server's tools) or
/// `--replay DIR` (the recording, checked against this server's tools), else none.
/// `server_info` is the server's `serverInfo`, `tools` its `tools/list`.
pub fn open(
    record: Option<&std::path::Path>,
    replay: Option<&std::path::Path>,
    set: &str,
    profile: &super::set::Profile,
    server_info: Option<&serde_json::Value>,
    tools: &[serde_json::Value],
) -> Result<Option<Tape>, String> {
    if record.is_none() && replay.is_none() {
        return Ok(None);
    }
    let names = super::names::Names::new(
        tools
            .iter()
            .filter_map(|t| t.get("name").and_then(serde_json::Value::as_str)),
    );
    let (specs, hash) = super::run::tool_specs(tools, &names);
    let sent = super::run::sent_tools(&specs);
    if let Some(dir) = replay {
        return Replayer::open(dir, set, &profile.name, &hash, &sent)
            .map(|r| Some(Tape::Replay(r)));
    }
    let field = |k: &str| {
        server_info
            .and_then(|s| s.get(k))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let server = format!("{} {}", field("name"), field("version"));
    Ok(record.map(|dir| Tape::Record(Recorder::new(dir, set, profile, server, hash, sent))))
}

/// After the run: a recorder writes what it collected (marked incomplete when the run
/// stopped early) and says where.
pub fn finish(client: &ModelClient, results: &super::results::EvalResults) -> Result<(), String> {
    let Some(Tape::Record(recorder)) = client.tape() else {
        return Ok(());
    };
    let tasks: Vec<&str> = results.tasks.iter().map(|t| t.id.as_str()).collect();
    let complete = !results.partial;
    let n = recorder.finish(&tasks, complete)?;
    errln!(
        "recorded {n} model exchange(s) of profile `{}` in {}{}",
        results.model.profile,
        recorder.dir().display(),
        if complete {
            ""
        } else {
            " (incomplete: the run stopped early; a replay of the missing trials fails)"
        }
    );
    Ok(())
}
