//! `--check` and the runs of the written scenarios: `mcpspec run` against the recorded
//! server, with the parameters the scenarios need.

use std::path::{Path, PathBuf};

use super::render;
use crate::face::cli::{RecordArgs, exit};

/// `--check`: run the written scenarios against the same server, as `mcpspec run` would.
pub(super) fn check(args: &RecordArgs) -> i32 {
    let mut cmd = match run_command(args) {
        Ok(cmd) => cmd,
        Err(e) => {
            errln!("mcpspec record --check: {e}");
            return exit::INVALID_INPUT;
        }
    };
    if let Some(era) = read_era(args.out()) {
        cmd.arg("--era").arg(era);
    }
    errln!("mcpspec record --check: running the scenarios against the server");
    match cmd.status() {
        Ok(status) => status.code().unwrap_or(exit::INVALID_INPUT),
        Err(e) => {
            errln!("mcpspec record --check: {e}");
            exit::INVALID_INPUT
        }
    }
}

/// `mcpspec run` of the written scenarios against the recorded server (with the
/// parameters they need); `Err` when the server is not known.
pub(super) fn run_command(args: &RecordArgs) -> Result<std::process::Command, String> {
    let me = std::env::current_exe().map_err(|_| "cannot find the mcpspec executable")?;
    let mut cmd = std::process::Command::new(me);
    cmd.arg("run").arg(args.out().join(render::SCENARIO_DIR));
    if !args.command.is_empty() {
        cmd.arg("--stdio").arg(shell_words::join(&args.command));
    } else if let Some(url) = &args.url {
        cmd.arg("--url").arg(url);
    } else if let Some(target) = &args.target {
        cmd.arg("--stdio").arg(target);
    } else {
        return Err("with --from-tape, give the server with --stdio".into());
    }
    for p in scenario_parameters(args.out()) {
        cmd.arg("--set")
            .arg(format!("{p}=env:{}", p.to_ascii_uppercase()));
    }
    Ok(cmd)
}

/// The era the scenarios were written for (from their `eras:` line); none when they were
/// written for both (each runs in its own).
fn read_era(out: &Path) -> Option<String> {
    scenario_texts(out)
        .into_iter()
        .find_map(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("eras: [")
                    .map(|r| r.trim_end_matches(']').to_string())
            })
        })
        .filter(|era| !era.contains(','))
}

fn scenario_parameters(out: &Path) -> Vec<String> {
    let mut params = std::collections::BTreeSet::new();
    for t in scenario_texts(out) {
        for l in t.lines() {
            if let Some(r) = l.trim().strip_prefix("parameters: [") {
                let list = r.split(']').next().unwrap_or_default();
                params.extend(list.split(", ").map(str::to_string));
            }
        }
    }
    params.into_iter().collect()
}

fn scenario_texts(out: &Path) -> Vec<String> {
    let dir: PathBuf = out.join(render::SCENARIO_DIR);
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}
