//! `mcpspec snapshot` and `mcpspec diff`: take a contract snapshot, compare two.

use std::path::Path;

use crate::face::cli::{DiffArgs, Format, SnapshotArgs, exit};
use crate::run::contract::{self, Snapshot};

use crate::face::app::connect::open;
use crate::face::app::report_files::write_reports_file;

pub(super) async fn snapshot(args: SnapshotArgs) -> i32 {
    let (mut conn, secrets) = match open(&args.target, &args.era).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let taken = contract::take_snapshot(&mut conn, args.profile.as_deref()).await;
    conn.close().await;
    let snap = match taken {
        Ok(s) => s,
        Err(e) => {
            errln!(
                "error: {}",
                crate::ground::redact::for_terminal(&e, &secrets)
            );
            return exit::FAILED;
        }
    };
    let dir = match &args.profile {
        Some(p) => args.out.join(p),
        None => args.out.clone(),
    };
    if let Err(e) = snap.write(&dir) {
        errln!("error: cannot write {}: {e}", dir.display());
        return exit::INVALID_INPUT;
    }
    errln!(
        "snapshot of {} ({} tools, {} resources, {} templates, {} prompts) written to {}",
        snap.server_label("the server"),
        snap.tools.len(),
        snap.resources.len(),
        snap.resource_templates.len(),
        snap.prompts.len(),
        dir.display()
    );
    let masks = snap.masks();
    if masks > 0 {
        errln!("note: {masks} secret value(s) redacted from the snapshot (shown as ***)");
    }
    exit::OK
}

/// The names of the two sides: `--label BASE..CANDIDATE`, else the snapshots' file or folder
/// names (the paths as given when the names are the same). Never the server's `serverInfo`
/// version: many servers report their SDK's version there, the same on both sides.
fn diff_labels(args: &DiffArgs) -> Result<(String, String), String> {
    if let Some(label) = &args.label {
        return match label.split_once("..") {
            Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() && !b.contains("..") => {
                Ok((a.trim().to_string(), b.trim().to_string()))
            }
            _ => Err(format!(
                "--label `{label}`: expected BASE..CANDIDATE (two names joined by `..`, e.g. v1.2..v1.3)"
            )),
        };
    }
    let name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let (a, b) = (name(&args.baseline), name(&args.candidate));
    if a == b {
        Ok((
            args.baseline.display().to_string(),
            args.candidate.display().to_string(),
        ))
    } else {
        Ok((a, b))
    }
}

pub(super) fn diff(args: DiffArgs) -> i32 {
    let load = |p: &Path| {
        Snapshot::read(p).map_err(|e| {
            errln!("error: {e}");
            exit::INVALID_INPUT
        })
    };
    let (base, cand) = match (load(&args.baseline), load(&args.candidate)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let rules = match &args.rules {
        Some(p) => match crate::language::contract_rules::Rules::load(p) {
            Ok(r) => r,
            Err(errors) => {
                errln!("{}", errors.render());
                return exit::INVALID_INPUT;
            }
        },
        None => crate::language::contract_rules::Rules::default(),
    };
    let labels = match diff_labels(&args) {
        Ok(l) => l,
        Err(e) => {
            errln!("error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let report = contract::diff_snapshots(&base, &cand, labels);
    let judgement = contract::rules::judge(&rules, &report, chrono::Utc::now().date_naive());
    let text = match args.format {
        Format::Text => contract::output::to_text(&report, &judgement),
        Format::Json => contract::output::to_json(&report, &judgement),
    };
    out!("{text}");
    if let Some(path) = &args.junit
        && let Err(code) = write_reports_file(
            path,
            contract::output::to_junit(&report, &judgement, args.junit_flavor.unwrap_or_default()),
        )
    {
        return code;
    }
    if judgement.fails() {
        exit::FAILED
    } else {
        exit::OK
    }
}
