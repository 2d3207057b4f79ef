//! Golden responses (`snapshot` expectations): the result, or a JSONPath of it, sanitized
//! and compared with a JSON file next to the scenario.
//!
//! The file is `__snapshots__/<scenario file stem>/<name>.json` (`<name>@<era>.json`
//! with `perEra: true`) beside the scenario file: pretty JSON with sorted keys, ending
//! with a newline. What is compared and what is written are the same text: sanitized
//! (volatile parts replaced by placeholders) and redacted (no secret byte reaches the
//! file), so an accepted snapshot passes on the next run.
//!
//! A missing or different file fails the step; `mcpspec run --update-snapshots` writes it
//! instead (and says so on stderr), so CI never accepts a change silently. Writing goes
//! through the run's [`Snapshots`] sink, which the engine hands to the judge: no
//! process-wide switch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use serde_json::Value;

use super::describe::{describe_no_response, failure};
use super::{ExpectOutcome, Observed};
use crate::ground::json::{json_eq, sort_keys};
use crate::language::dsl::scenario::expect::{Expect, SanitizerSpec, SnapshotSpec};
use crate::results::outcome::Finding;

/// Where the `snapshot` expectations of one run go: compared only, or (with
/// `--update-snapshots`) new and changed files written, one content per file per run.
/// Made by each run (a `--watch` loop runs several, each starting with no file claimed)
/// and shared by its suites.
#[derive(Debug, Default)]
pub struct Snapshots {
    update: bool,
    /// What this run holds true of each file it wrote or matched: the era that did it
    /// first and the text.
    claimed: Mutex<HashMap<PathBuf, (String, String)>>,
}

impl Snapshots {
    /// `update`: write new and changed files instead of failing (`--update-snapshots`).
    pub fn new(update: bool) -> Self {
        Snapshots {
            update,
            claimed: Mutex::default(),
        }
    }
}

/// ISO 8601 / RFC 3339 date-times (`2026-12-01T18:53:14Z`, `2026-12-01 18:53:14.5+01:00`).
pub static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?",
    )
    .expect("timestamp pattern compiles")
});
/// UUIDs in their 8-4-4-4-12 hex form, any version.
pub static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
        .expect("uuid pattern compiles")
});
/// JWTs (three base64url parts, header and payload JSON objects; the signature may be
/// empty), the shape `crate::ground::redact` masks too.
static JWT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
        .expect("jwt pattern compiles")
});

/// Judge a `snapshot` expectation (and write the file under `--update-snapshots`).
pub(super) fn check(
    expect: &Expect,
    spec: &SnapshotSpec,
    seen: &Observed,
    ctx: &Value,
) -> ExpectOutcome {
    let fail = super::failing(expect, seen);
    let Some(doc) = &seen.document else {
        return fail(
            format!("snapshot `{}`: no JSON-RPC response to compare", spec.name),
            None,
            Some(describe_no_response(seen.exchange)),
        );
    };
    let value = match &spec.path {
        None => doc.as_ref().clone(),
        Some((p, src)) => match p.query(doc).as_slice() {
            [] => {
                return fail(
                    format!("snapshot `{}`: `{src}` matched nothing", spec.name),
                    None,
                    None,
                );
            }
            [one] => (*one).clone(),
            many => Value::Array(many.iter().map(|v| (*v).clone()).collect()),
        },
    };
    let actual = canonical(value, &spec.sanitizers);
    let actual_text = to_text(&actual);
    let era = ctx.get("era").and_then(Value::as_str);
    let file = file_for(Path::new(expect.pos.file_name()), spec, era);
    let shown = file.display().to_string();
    let sink = seen.snapshots.filter(|s| s.update);
    let update = sink.is_some();
    if let Some(sink) = sink
        && let Err(message) = sink.claim(&file, era, &actual_text)
    {
        return fail(message, None, Some(actual_text));
    }
    let stored = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return fail(format!("cannot read snapshot {shown}: {e}"), None, None),
    };
    let Some(stored) = stored else {
        if update {
            return write(&file, &actual_text, "written", expect, seen);
        }
        return fail(
            format!("no snapshot {shown}; run with --update-snapshots to write it"),
            None,
            Some(actual_text),
        );
    };
    let expected = match serde_json::from_str::<Value>(&stored) {
        Ok(v) => v,
        Err(_) if update => return write(&file, &actual_text, "updated", expect, seen),
        Err(e) => {
            return fail(
                format!(
                    "snapshot {shown} is not JSON ({e}); fix it or run with --update-snapshots"
                ),
                None,
                None,
            );
        }
    };
    if json_eq(&expected, &actual) {
        return ExpectOutcome::Pass;
    }
    if update {
        return write(&file, &actual_text, "updated", expect, seen);
    }
    fail(
        format!("the response differs from snapshot {shown} (accept it with --update-snapshots)"),
        Some(to_text(&sort_keys(expected))),
        Some(actual_text),
    )
}

impl Snapshots {
    /// Under `--update-snapshots`, one file gets one content per run: two eras of a
    /// scenario that answer differently would otherwise write it in turn (`written`, then
    /// `updated`), exit 0, and fail the next run whichever came last.
    fn claim(&self, file: &Path, era: Option<&str>, text: &str) -> Result<(), String> {
        let era = era.unwrap_or("auto");
        let mut claimed = self.claimed.lock().unwrap_or_else(|e| e.into_inner());
        match claimed.get(file) {
            Some((first, prior)) if prior != text && first != era => Err(format!(
                "snapshot {}: the {era} response differs from the {first} one, and both eras write \
             this one file; give the snapshot `perEra: true` (one file per era, `NAME@ERA.json`)",
                file.display()
            )),
            Some((_, prior)) if prior != text => Err(format!(
                "snapshot {}: two expectations of this run write it with different contents; \
             give them different names",
                file.display()
            )),
            Some(_) => Ok(()),
            None => {
                claimed.insert(file.to_path_buf(), (era.to_string(), text.to_string()));
                Ok(())
            }
        }
    }
}

/// Write the snapshot file (creating its folder); the step passes, and stderr says so.
/// Written beside and renamed into place, so a suite reading it concurrently (another
/// era of the same scenario) never sees half a file.
fn write(file: &Path, text: &str, what: &str, expect: &Expect, seen: &Observed) -> ExpectOutcome {
    let result = match file.parent() {
        Some(dir) => std::fs::create_dir_all(dir),
        None => Ok(()),
    }
    .and_then(|()| crate::ground::files::write_whole(file, text));
    match result {
        Ok(()) => {
            errln!("snapshot {what}: {}", file.display());
            ExpectOutcome::Pass
        }
        Err(e) => ExpectOutcome::Fail(failure(
            expect,
            seen.severity,
            Finding::message(format!("cannot write snapshot {}: {e}", file.display())),
        )),
    }
}

/// The snapshot file of `spec` for a scenario file.
pub fn file_for(scenario: &Path, spec: &SnapshotSpec, era: Option<&str>) -> PathBuf {
    let dir = scenario.parent().unwrap_or(Path::new("."));
    let stem = scenario
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    let name = match (spec.per_era, era) {
        (true, Some(era)) => format!("{}@{era}.json", spec.name),
        _ => format!("{}.json", spec.name),
    };
    dir.join("__snapshots__").join(stem).join(name)
}

/// The value as it is compared and stored: sanitized, redacted, keys sorted.
pub fn canonical(value: Value, sanitizers: &[SanitizerSpec]) -> Value {
    let mut value = sanitize(value, sanitizers);
    crate::ground::redact::known().redact_json(&mut value);
    sort_keys(value)
}

/// `value` with the sanitizers applied, in order (golden responses; an eval replay's tool
/// results).
pub fn sanitize(mut value: Value, sanitizers: &[SanitizerSpec]) -> Value {
    for s in sanitizers {
        match s {
            SanitizerSpec::Path(path, replace) => {
                for pointer in path.pointers(&value) {
                    // A match inside one already replaced is gone: nothing to do.
                    if let Some(node) = value.pointer_mut(&pointer) {
                        *node = Value::String(replace.clone());
                    }
                }
            }
            SanitizerSpec::Timestamps => replace_strings(&mut value, &TIMESTAMP, "<timestamp>"),
            SanitizerSpec::Uuids => replace_strings(&mut value, &UUID, "<uuid>"),
            SanitizerSpec::Jwts => replace_strings(&mut value, &JWT, "<jwt>"),
            SanitizerSpec::Regex(re, replace) => replace_strings(&mut value, re, replace),
        }
    }
    value
}

/// `value` with its timestamps and UUIDs replaced, as the `timestamps` and `uuids`
/// sanitizers do (an eval replay compares the server's tool results through them).
pub fn without_volatile(mut value: Value) -> Value {
    replace_strings(&mut value, &TIMESTAMP, "<timestamp>");
    replace_strings(&mut value, &UUID, "<uuid>");
    value
}

/// Replace every match of `re` in every string of `value` (keys untouched).
fn replace_strings(value: &mut Value, re: &Regex, replace: &str) {
    match value {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(new) = re.replace_all(s, replace) {
                *s = new;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| replace_strings(v, re, replace)),
        Value::Object(fields) => fields
            .values_mut()
            .for_each(|v| replace_strings(v, re, replace)),
        _ => {}
    }
}

/// The file's text: pretty JSON ending with a newline.
pub fn to_text(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::json::path::CompiledPath;
    use serde_json::json;

    fn sanitize(v: Value, s: &[SanitizerSpec]) -> Value {
        canonical(v, s)
    }

    #[test]
    fn builtins_replace_volatile_parts_only() {
        let v = json!({
            "at": "created 2026-12-01T18:53:14.123Z by x",
            "day": "2026-12-01",
            "id": "3f2b8c1e-9a4d-4c2e-8f1a-0123456789ab",
            "token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",
            "n": 42,
        });
        let out = sanitize(
            v,
            &[
                SanitizerSpec::Timestamps,
                SanitizerSpec::Uuids,
                SanitizerSpec::Jwts,
            ],
        );
        assert_eq!(
            out,
            json!({
                "at": "created <timestamp> by x",
                "day": "2026-12-01",
                "id": "<uuid>",
                "n": 42,
                "token": "<jwt>",
            })
        );
        // Keys come out sorted.
        let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["at", "day", "id", "n", "token"]);
    }

    #[test]
    fn without_sanitizers_volatile_parts_stay() {
        let v = json!({"id": "3f2b8c1e-9a4d-4c2e-8f1a-0123456789ab"});
        assert_eq!(sanitize(v.clone(), &[]), v);
    }

    #[test]
    fn path_and_regex_sanitizers() {
        let v = json!({"items": [{"id": 7, "ref": "req-12 ok"}, {"id": 9, "ref": "req-3"}]});
        let out = sanitize(
            v,
            &[
                SanitizerSpec::Path(CompiledPath::parse("$..id").unwrap(), "<id>".into()),
                SanitizerSpec::Regex(Regex::new(r"req-(\d+)").unwrap(), "req-N".into()),
            ],
        );
        assert_eq!(
            out,
            json!({"items": [{"id": "<id>", "ref": "req-N ok"}, {"id": "<id>", "ref": "req-N"}]})
        );
    }

    #[test]
    fn file_names() {
        let spec = |per_era| SnapshotSpec {
            name: "weather".into(),
            path: None,
            sanitizers: vec![],
            per_era,
        };
        let f = Path::new("tests/snapshots/weather.yaml");
        assert_eq!(
            file_for(f, &spec(false), Some("legacy")),
            Path::new("tests/snapshots/__snapshots__/weather/weather.json")
        );
        assert_eq!(
            file_for(f, &spec(true), Some("legacy")),
            Path::new("tests/snapshots/__snapshots__/weather/weather@legacy.json")
        );
    }
}
