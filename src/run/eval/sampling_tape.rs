//! `mcpspec run --record-models FILE` / `--replay-models FILE`: the model answers of
//! `sampling:` answers that name a profile, recorded so a run replays them offline (no key,
//! no network, no cost) — the spirit of `eval run --record/--replay` ([`super::record`]),
//! for sampling. An exchange is keyed by the profile and the sha256 of the model request
//! body (redacted): the same server request, sent through the same profile, replays the
//! same answer wherever it comes from; a request the recording lacks is an error naming it.
//!
//! No header is stored (the key travels only in headers), and every string of the request
//! and reply is redacted with the process's known secrets and the secret-shaped patterns
//! before it is written (a replay then answers with the masked text).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::record::redacted;

/// The `format` of a sampling recording.
pub const SAMPLING_FORMAT: &str = "mcpspec-sampling-recording/1";

/// The recording file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRecording {
    pub format: String,
    /// RFC 3339.
    pub recorded: String,
    /// The mcpspec version that recorded it.
    pub mcpspec: String,
    /// In key order (profile, then request hash): re-recording diffs line by line.
    pub exchanges: Vec<SamplingExchange>,
}

/// One model request of a sampling answer and the API's reply.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingExchange {
    pub profile: String,
    /// `sha256:` of the redacted request body: the key a replay looks up.
    pub request_hash: String,
    /// The request body as sent (redacted, no headers).
    pub request: Value,
    /// The API's reply body (redacted).
    pub reply: Value,
}

/// The key of a model request: the sha256 of its body, redacted as it is written.
pub fn request_hash(body: &Value) -> String {
    let digest = Sha256::digest(redacted(body).to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// What the sampler does besides (or instead of) asking the model.
pub enum SamplingTape {
    Record {
        file: PathBuf,
        exchanges: Mutex<BTreeMap<(String, String), SamplingExchange>>,
    },
    Replay {
        file: PathBuf,
        exchanges: BTreeMap<(String, String), Value>,
    },
}

impl SamplingTape {
    /// A recorder writing `file` when the run ends.
    pub fn record(file: &Path) -> Result<SamplingTape, String> {
        if file.is_dir() {
            return Err(format!(
                "--record-models {}: a folder; name a file (JSON)",
                file.display()
            ));
        }
        Ok(SamplingTape::Record {
            file: file.to_path_buf(),
            exchanges: Mutex::default(),
        })
    }

    /// The recording of `file`, loaded.
    pub fn replay(file: &Path) -> Result<SamplingTape, String> {
        let shown = file.display();
        let text = std::fs::read_to_string(file).map_err(|e| {
            format!(
                "--replay-models {shown}: no recording there ({e}); make one with `--record-models {shown}`"
            )
        })?;
        let doc: SamplingRecording = serde_json::from_str(&text).map_err(|e| {
            format!(
                "--replay-models {shown}: not a sampling recording ({e}); make one with `--record-models {shown}`"
            )
        })?;
        if doc.format != SAMPLING_FORMAT {
            return Err(format!(
                "--replay-models {shown}: unsupported recording format `{}`: this mcpspec reads {SAMPLING_FORMAT}; re-record with `--record-models {shown}`",
                doc.format
            ));
        }
        let exchanges = doc
            .exchanges
            .into_iter()
            .map(|e| ((e.profile, e.request_hash), e.reply))
            .collect();
        Ok(SamplingTape::Replay {
            file: file.to_path_buf(),
            exchanges,
        })
    }

    /// The recorded reply of `profile` to `body`, or why there is none.
    pub fn replayed(&self, profile: &str, body: &Value) -> Option<Result<Value, String>> {
        let SamplingTape::Replay { file, exchanges } = self else {
            return None;
        };
        let hash = request_hash(body);
        Some(
            exchanges
                .get(&(profile.to_string(), hash.clone()))
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "--replay-models {}: no recorded answer of the model profile `{profile}` to this sampling request (request {hash}): the server asked something else, or the profile's parameters changed; if intended, re-record with `--record-models {}`",
                        file.display(),
                        file.display()
                    )
                }),
        )
    }

    /// Keep one exchange (recording only).
    pub fn store(&self, profile: &str, body: &Value, reply: &Value) {
        if let SamplingTape::Record { exchanges, .. } = self {
            let hash = request_hash(body);
            let exchange = SamplingExchange {
                profile: profile.to_string(),
                request_hash: hash.clone(),
                request: redacted(body),
                reply: redacted(reply),
            };
            exchanges
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((profile.to_string(), hash), exchange);
        }
    }

    /// After the run: a recorder writes its file; `Some(line)` says what was written.
    pub fn finish(&self) -> Result<Option<String>, String> {
        let SamplingTape::Record { file, exchanges } = self else {
            return Ok(None);
        };
        let exchanges: Vec<SamplingExchange> =
            std::mem::take(&mut *exchanges.lock().unwrap_or_else(|e| e.into_inner()))
                .into_values()
                .collect();
        let n = exchanges.len();
        let doc = SamplingRecording {
            format: SAMPLING_FORMAT.to_string(),
            recorded: chrono::Utc::now().to_rfc3339(),
            mcpspec: env!("CARGO_PKG_VERSION").to_string(),
            exchanges,
        };
        let mut text = serde_json::to_string_pretty(&doc).expect("recording serializes");
        text.push('\n');
        std::fs::write(file, text)
            .map_err(|e| format!("--record-models: cannot write {}: {e}", file.display()))?;
        Ok(Some(format!(
            "recorded {n} sampling model exchange(s) in {}",
            file.display()
        )))
    }
}
