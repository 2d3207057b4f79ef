//! `eval run --record DIR`: every model exchange of a run — the request body sent and the
//! reply received (or the trial-level error), per task, trial and turn — with the tool list
//! the model was sent and its `toolsHash`, so that `--replay DIR` can re-run the set with
//! no model. Layout (one file per task, so re-recording shows as a readable diff):
//!
//! ```text
//! DIR/recording.json           manifest: the set, and per profile the tools and toolsHash
//! DIR/<profile>/<task>.json    the exchanges of one task, trial by trial, turn by turn
//! ```
//!
//! No header is stored (the key travels only in headers), the base URL is stored without
//! userinfo or query, and every string is redacted with the process's known secrets and
//! the secret-shaped patterns before it is written. A grading prompt's random fence is
//! stored as `{fence}` ([`super::fence`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conversation::TurnAt;
use super::fence::neutral;
use super::profile::{Profile, public_url};
use super::results::ModelApi;

/// The `format` of the manifest and of every task file.
pub const RECORDING_FORMAT: &str = "mcpspec-eval-recording/1";
/// The manifest's file name inside the recording directory.
pub const MANIFEST: &str = "recording.json";

/// `DIR/recording.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: String,
    /// The eval set's name.
    pub set: String,
    /// Per model profile (the set's `models:` key).
    pub profiles: BTreeMap<String, ProfileRecording>,
}

/// One profile's recorded run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRecording {
    pub api: ModelApi,
    pub model: String,
    /// Without userinfo, query or fragment.
    pub base_url: String,
    /// `serverInfo` name and version of the server it was recorded against.
    pub server: String,
    /// The hash the results record (`server.toolsHash`) of `tools`.
    pub tools_hash: String,
    /// The tool list the model was sent (model-side names), to say what changed.
    pub tools: Vec<Value>,
    /// RFC 3339.
    pub recorded: String,
    /// The mcpspec version that recorded it.
    pub mcpspec: String,
    /// False when the run stopped early (Ctrl-C, a fatal model API error): some trials are
    /// missing and a replay of them fails.
    pub complete: bool,
    /// The tasks recorded, in set order.
    pub tasks: Vec<String>,
}

/// `DIR/<profile>/<task>.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecording {
    pub format: String,
    pub profile: String,
    pub task: String,
    pub tools_hash: String,
    pub trials: Vec<TrialRecording>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrialRecording {
    pub index: u32,
    pub turns: Vec<ModelExchange>,
}

/// One model request and what came back.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelExchange {
    /// 1-based: the model's turn, or the judge's judged answer.
    pub turn: u32,
    /// The judge grading the trial's answer (recorded after the model's turns).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub judge: bool,
    /// The request body as sent (no headers).
    pub request: Value,
    /// The API's reply body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Value>,
    /// Requests repeated after a 429/5xx before the reply came.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// Why the turn failed the trial instead (after retries, a timeout, a broken body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A task id or profile name as a file name: `[A-Za-z0-9_.-]` kept, every other byte as
/// `%XX` (a leading `.` too), so any id maps to one file and none escapes the folder.
pub fn file_name(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for (i, b) in id.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() { "%".into() } else { out }
}

/// Where a profile's task files live.
pub fn task_path(dir: &Path, profile: &str, task: &str) -> PathBuf {
    dir.join(file_name(profile))
        .join(format!("{}.json", file_name(task)))
}

/// Shortest known secret masked in a recording: a shorter "key" (`test`, `the`) is more
/// likely a word of the conversation, and masking it would corrupt what the replay
/// compares.
pub const MIN_MASKED_KEY_CHARS: usize = 12;

/// A JSON value as it may be written: every exact occurrence of a known key (of
/// [`MIN_MASKED_KEY_CHARS`] or more) masked, nothing else — a replay reads no key, so it
/// compares a masked stretch as any text (see [`super::replay_match`]).
pub fn redacted(value: &Value) -> Value {
    let known = crate::ground::redact::known();
    let keys: Vec<&str> = known
        .values()
        .iter()
        .map(String::as_str)
        .filter(|k| k.chars().count() >= MIN_MASKED_KEY_CHARS)
        .collect();
    let mut v = value.clone();
    if !keys.is_empty() {
        mask(&mut v, &keys);
    }
    v
}

/// Replace every occurrence of `keys` (longest first, as [`crate::ground::redact`] keeps
/// them) in the strings of `value`.
fn mask(value: &mut Value, keys: &[&str]) {
    match value {
        Value::String(s) => {
            for k in keys {
                if s.contains(k) {
                    *s = s.replace(k, crate::ground::redact::MASK);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask(v, keys)),
        Value::Object(fields) => fields.values_mut().for_each(|v| mask(v, keys)),
        _ => {}
    }
}

/// Collects the exchanges of one profile's run (from every `--jobs` worker) and writes them
/// when the run ends.
pub struct Recorder {
    dir: PathBuf,
    profile: String,
    entry: ProfileRecording,
    set: String,
    exchanges: Mutex<BTreeMap<(String, u32, bool, u32), ModelExchange>>,
}

impl Recorder {
    /// `tools` is the tool list as the model is sent it (see [`super::conversation::sent_tools`]).
    pub fn new(
        dir: &Path,
        set: &str,
        profile: &Profile,
        server: String,
        tools_hash: String,
        tools: Vec<Value>,
    ) -> Recorder {
        Recorder {
            dir: dir.to_path_buf(),
            profile: profile.name.clone(),
            set: set.to_string(),
            entry: ProfileRecording {
                api: profile.api,
                model: profile.model.clone(),
                base_url: public_url(&profile.base_url),
                server,
                tools_hash,
                tools,
                recorded: chrono::Utc::now().to_rfc3339(),
                mcpspec: env!("CARGO_PKG_VERSION").to_string(),
                complete: true,
                tasks: Vec::new(),
            },
            exchanges: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Refuse, before anything is spent, a folder that is neither new, empty nor a
    /// recording (a typo must not fill someone's folder).
    pub fn check_dir(dir: &Path) -> Result<(), String> {
        if dir.exists() && !dir.is_dir() {
            return Err(format!("--record {}: not a folder", dir.display()));
        }
        if dir_has_entries(dir) && !dir.join(MANIFEST).is_file() {
            return Err(format!(
                "--record {}: the folder is not empty and holds no {MANIFEST}: not a recording, left alone (name an empty or new folder)",
                dir.display()
            ));
        }
        Ok(())
    }

    /// Keep one exchange: the reply and its retries, or the trial-level error.
    pub fn store(&self, at: &TurnAt<'_>, body: &Value, outcome: Result<(&Value, u32), &String>) {
        let (reply, retries, error) = match outcome {
            Ok((reply, retries)) => (Some(redacted(&neutral(reply, at.fence))), retries, None),
            Err(why) => (None, 0, Some(crate::ground::redact::known().redact(why))),
        };
        let exchange = ModelExchange {
            turn: at.turn,
            judge: at.judge,
            request: redacted(&neutral(body, at.fence)),
            reply,
            retries,
            error,
        };
        self.exchanges
            .lock()
            .unwrap()
            .insert((at.task.to_string(), at.trial, at.judge, at.turn), exchange);
    }

    /// Write the recording of `tasks` (the run's tasks, in set order): this profile's folder
    /// is replaced, the manifest's entry for it updated. `complete` is false when the run
    /// stopped early. Returns how many exchanges were written.
    pub fn finish(&self, tasks: &[&str], complete: bool) -> Result<usize, String> {
        Self::check_dir(&self.dir)?;
        let manifest_path = self.dir.join(MANIFEST);
        let mut manifest = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => match serde_json::from_str::<Manifest>(&text) {
                Ok(m) if m.format == RECORDING_FORMAT && m.set == self.set => m,
                // Another set, or an older format: this recording starts over.
                _ => self.fresh_manifest(),
            },
            Err(_) => self.fresh_manifest(),
        };
        if manifest.set != self.set {
            manifest = self.fresh_manifest();
        }
        let profile_dir = self.dir.join(file_name(&self.profile));
        let io = |what: &str, path: &Path, e: std::io::Error| {
            format!("--record: cannot {what} {}: {e}", path.display())
        };
        let before = files_of(&profile_dir);
        if profile_dir.exists() {
            std::fs::remove_dir_all(&profile_dir).map_err(|e| io("replace", &profile_dir, e))?;
        }
        std::fs::create_dir_all(&profile_dir).map_err(|e| io("create", &profile_dir, e))?;
        let exchanges = std::mem::take(&mut *self.exchanges.lock().unwrap());
        let mut written = 0;
        let mut recorded = Vec::new();
        for task in tasks {
            let mut trials: BTreeMap<u32, Vec<ModelExchange>> = BTreeMap::new();
            let (first, last) = (
                (task.to_string(), 0, false, 0),
                (task.to_string(), u32::MAX, true, u32::MAX),
            );
            for ((_, trial, _, _), exchange) in exchanges.range(first..=last) {
                trials.entry(*trial).or_default().push(exchange.clone());
                written += 1;
            }
            if trials.is_empty() {
                continue;
            }
            let doc = TaskRecording {
                format: RECORDING_FORMAT.to_string(),
                profile: self.profile.clone(),
                task: task.to_string(),
                tools_hash: self.entry.tools_hash.clone(),
                trials: trials
                    .into_iter()
                    .map(|(index, turns)| TrialRecording { index, turns })
                    .collect(),
            };
            let path = task_path(&self.dir, &self.profile, task);
            write_json(&path, &doc).map_err(|e| io("write", &path, e))?;
            recorded.push(task.to_string());
        }
        let mut entry = self.entry.clone();
        entry.complete = complete;
        entry.tasks = recorded;
        // Nothing recorded changed: the entry keeps when and where it was recorded (a local
        // model server's port, the clock), so a committed recording shows no noisy diff.
        if let Some(old) = manifest.profiles.get(&self.profile)
            && files_of(&profile_dir) == before
        {
            let mut same = entry.clone();
            same.base_url.clone_from(&old.base_url);
            same.recorded.clone_from(&old.recorded);
            if serde_json::to_value(&same).ok() == serde_json::to_value(old).ok() {
                entry = same;
            }
        }
        manifest.profiles.insert(self.profile.clone(), entry);
        write_json(&manifest_path, &manifest).map_err(|e| io("write", &manifest_path, e))?;
        Ok(written)
    }

    fn fresh_manifest(&self) -> Manifest {
        Manifest {
            format: RECORDING_FORMAT.to_string(),
            set: self.set.clone(),
            profiles: BTreeMap::new(),
        }
    }
}

/// The files of a folder (name and bytes, sorted); empty when it cannot be read.
fn files_of(dir: &Path) -> BTreeMap<std::ffi::OsString, Vec<u8>> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name(), std::fs::read(e.path()).ok()?)))
        .collect()
}

fn dir_has_entries(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}

/// Pretty JSON with a final newline (committed recordings diff line by line).
fn write_json(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("recording serializes");
    text.push('\n');
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(dir: &Path, base_url: &str, reply: &str) -> Recorder {
        let exchange = ModelExchange {
            turn: 1,
            judge: false,
            request: serde_json::json!({"messages": ["hi"]}),
            reply: Some(serde_json::json!({"text": reply})),
            retries: 0,
            error: None,
        };
        Recorder {
            dir: dir.to_path_buf(),
            profile: "local".into(),
            set: "s".into(),
            entry: ProfileRecording {
                api: ModelApi::Openai,
                model: "m".into(),
                base_url: base_url.into(),
                server: "srv 1".into(),
                tools_hash: "h".into(),
                tools: Vec::new(),
                recorded: chrono::Utc::now().to_rfc3339(),
                mcpspec: "0".into(),
                complete: true,
                tasks: Vec::new(),
            },
            exchanges: Mutex::new(BTreeMap::from([(("t".to_string(), 0, false, 1), exchange)])),
        }
    }

    /// Recording again what was recorded (a local model server on another port, later)
    /// leaves the manifest as it was; a changed answer updates when and where (#38 item 20).
    #[test]
    fn an_unchanged_recording_keeps_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = || std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
        recorder(dir.path(), "http://127.0.0.1:1111/v1", "sunny")
            .finish(&["t"], true)
            .unwrap();
        let first = manifest();
        std::thread::sleep(std::time::Duration::from_millis(5));
        recorder(dir.path(), "http://127.0.0.1:2222/v1", "sunny")
            .finish(&["t"], true)
            .unwrap();
        assert_eq!(manifest(), first);
        recorder(dir.path(), "http://127.0.0.1:3333/v1", "rainy")
            .finish(&["t"], true)
            .unwrap();
        assert!(manifest().contains("3333"), "{}", manifest());
    }

    #[test]
    fn any_id_is_one_file_inside_the_folder() {
        assert_eq!(file_name("weather-boston"), "weather-boston");
        assert_eq!(file_name("a/b"), "a%2Fb");
        assert_eq!(file_name(".."), "%2E.");
        assert_eq!(file_name("café"), "caf%C3%A9");
        assert_eq!(file_name(""), "%");
        assert_ne!(file_name("a b"), file_name("a_b"));
    }

    /// A key that is a common word is not masked in a recording (it would corrupt every
    /// "the" of the conversation and the replay would blame the set); a real key is, and
    /// only where it occurs exactly.
    #[test]
    fn only_exact_keys_of_a_minimum_length_are_masked() {
        crate::ground::redact::remember(&["the".into(), "sk-rec-test-0123456789".into()]);
        let v = serde_json::json!({"messages": [
            {"content": "the weather; key sk-rec-test-0123456789; id 4f9c2a7e-1b3d-4c5e-8f90-123456789abc"}
        ]});
        let r = redacted(&v);
        assert_eq!(
            r["messages"][0]["content"],
            "the weather; key ***; id 4f9c2a7e-1b3d-4c5e-8f90-123456789abc"
        );
    }
}
