//! Which eras the written scenarios are for: both only when the session used nothing
//! era-specific and its scenarios, run in the other era against the same server, pass
//! (error codes and texts differ by era); else the recorded one, and why.

use super::check::run_command;
use super::{render, session};
use crate::face::cli::RecordArgs;

/// The eras to write first: both when the session used nothing era-specific and can be
/// run in the other era to see (then [`passes_in`] decides), else the recorded one and why.
pub(super) fn first_eras(args: &RecordArgs, session: &session::Session) -> render::Eras {
    let other = other_era(session);
    if session.era.is_none() {
        return render::Eras::Only("the client's era is not on the tape".into());
    }
    if let Some(why) = session.era_bound() {
        return render::Eras::Only(why);
    }
    if crate::ground::signals::received().is_some() {
        return render::Eras::Only(format!(
            "the session used nothing era-specific, but the recording was interrupted before the scenarios were run in the {other} era"
        ));
    }
    if run_command(args).is_err() {
        return render::Eras::Only(format!(
            "the session used nothing era-specific, but there was no server to run the scenarios against in the {other} era (give --stdio with --from-tape)"
        ));
    }
    render::Eras::Both
}

/// The era the session was not recorded in.
pub(super) fn other_era(session: &session::Session) -> &'static str {
    match session.era {
        Some(session::EraUsed::Modern) => session::EraUsed::Legacy.label(),
        _ => session::EraUsed::Modern.label(),
    }
}

/// Run the written scenarios in `era` against the recorded server, quietly: `Err` says how
/// they failed.
pub(super) fn passes_in(args: &RecordArgs, era: &str) -> Result<(), String> {
    let mut cmd = run_command(args)?;
    cmd.arg("--era").arg(era);
    cmd.stdin(std::process::Stdio::null());
    let out = cmd
        .output()
        .map_err(|e| format!("the scenarios could not be run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = first_failure(&stdout)
        .or_else(|| {
            stderr
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        })
        .unwrap_or_default();
    let first =
        crate::ground::redact::known().redact(&crate::ground::redact::shorten(first.trim(), 200));
    Err(if first.is_empty() {
        format!(
            "they did not pass (exit {})",
            out.status.code().unwrap_or(-1)
        )
    } else {
        format!("they did not pass: {first}")
    })
}

/// The first failed step of a run's console report and why (`` `read note://nope`: error:
/// expected error code -32002, got -32602 ``).
fn first_failure(report: &str) -> Option<String> {
    let mut lines = report.lines();
    while let Some(line) = lines.next() {
        let step = line
            .strip_prefix("  ")
            .map(str::trim_start)
            .and_then(|l| l.strip_prefix("FAIL").or_else(|| l.strip_prefix("ERROR")));
        if let Some(step) = step {
            let why = lines.find(|l| !l.trim().is_empty()).unwrap_or_default();
            return Some(format!("`{}`: {}", step.trim(), why.trim()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_failed_step_and_why() {
        let report = "FAIL  recorded-session@modern (2026-07-28) 0.090s\n  PASS  list tools\n  FAIL  read note://nope\n      error: expected error code -32002, got -32602\n        --> x.yaml:43:9\nSummary: 1 suites\n";
        assert_eq!(
            super::first_failure(report).as_deref(),
            Some("`read note://nope`: error: expected error code -32002, got -32602")
        );
        assert_eq!(super::first_failure("Summary: 1 suites, 1 passed\n"), None);
    }
}
