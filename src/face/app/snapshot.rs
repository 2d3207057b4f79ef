//! `mcpspec snapshot` and `mcpspec diff`: take a contract snapshot, compare two.

use std::path::Path;

use crate::face::cli::{DiffArgs, Format, SnapshotArgs, exit};
use crate::results::report;
use crate::run::contract::{self, Snapshot};

use super::{open, write_reports_file};

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
            errln!("error: {}", report::redact(&e, &secrets));
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
        Some(p) => match contract::rules::Rules::load(p) {
            Ok(r) => r,
            Err(errors) => {
                errln!("{}", errors.render());
                return exit::INVALID_INPUT;
            }
        },
        None => contract::rules::Rules::default(),
    };
    let labels = (
        base.label(&args.baseline.display().to_string()),
        cand.label(&args.candidate.display().to_string()),
    );
    let report = contract::diff_snapshots(&base, &cand, labels);
    let judgement = contract::rules::judge(&rules, &report, chrono::Utc::now().date_naive());
    let text = match args.format {
        Format::Text => contract::output::to_text(&report, &judgement),
        Format::Json => contract::output::to_json(&report, &judgement),
    };
    out!("{text}");
    if let Some(path) = &args.junit
        && let Err(code) = write_reports_file(path, contract::output::to_junit(&report, &judgement))
    {
        return code;
    }
    if judgement.fails() {
        exit::FAILED
    } else {
        exit::OK
    }
}
