//! `eval run --record DIR` / `--replay DIR`: every model turn goes through
//! [`ModelClient::turn_at`](super::llm::ModelClient::turn_at), which knows where the turn
//! sits in the run (task, trial, turn) and plays it on the client's tape. Recording stores
//! the request sent and the answer received ([`super::record`]); replay answers from the
//! recording without a request, a key or a cost ([`super::replay`]).

use super::conversation::{sent_tools, tool_specs};
use super::names::Names;
use super::profile::Profile;
use super::record::Recorder;
use super::replay::Replayer;
use super::results::EvalResults;

/// What a client does besides (or instead of) asking the model.
pub enum Tape {
    Record(Recorder),
    Replay(Replayer),
}

/// The tape of one profile's run: `--record DIR` (a recorder for this server's tools) or
/// `--replay DIR` (the recording, checked against this server's tools), else none.
/// `server_info` is the server's `serverInfo`, `tools` its `tools/list`; a replay compares
/// the server's tool results through the set's `sanitizers`.
pub fn open(
    record: Option<&std::path::Path>,
    replay: Option<&std::path::Path>,
    set: &str,
    sanitizers: &[crate::language::dsl::scenario::expect::SanitizerSpec],
    profile: &Profile,
    server_info: Option<&serde_json::Value>,
    tools: &[serde_json::Value],
) -> Result<Option<Tape>, String> {
    if record.is_none() && replay.is_none() {
        return Ok(None);
    }
    let names = Names::new(
        tools
            .iter()
            .filter_map(|t| t.get("name").and_then(serde_json::Value::as_str)),
    );
    let (specs, hash) = tool_specs(tools, &names);
    let sent = sent_tools(&specs);
    if let Some(dir) = replay {
        return Replayer::open(dir, set, &profile.name, &hash, &sent, sanitizers)
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
pub fn finish(tape: Option<&Tape>, results: &EvalResults) -> Result<(), String> {
    let Some(Tape::Record(recorder)) = tape else {
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
