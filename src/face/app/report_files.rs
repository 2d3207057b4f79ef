//! Writing report files (JUnit, HTML, SARIF, JSON) of a finished run or merge; `-` is stdout.

use std::path::{Path, PathBuf};

use crate::face::cli::exit;
use crate::results::report;
use crate::results::report::result::RunReport;

/// A report path of `-`: stdout.
pub(crate) fn is_stdout(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.as_os_str() == "-")
}

pub(crate) fn write_reports_file(path: &Path, text: String) -> Result<(), i32> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(path, text).map_err(|e| {
        errln!("error: cannot write {}: {e}", path.display());
        exit::INVALID_INPUT
    })
}

/// Where a run's (or a merge's) report files go.
pub(crate) struct ReportPaths {
    pub junit: Option<PathBuf>,
    pub junit_flavor: crate::results::junit::Flavor,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
    pub sarif_source: Option<String>,
}

pub(crate) fn write_reports(
    report: &RunReport,
    paths: &ReportPaths,
    secrets: &[String],
) -> Result<(), i32> {
    if let Some(path) = &paths.junit {
        write_reports_file(
            path,
            report::junit::to_junit(report, secrets, paths.junit_flavor),
        )?;
    }
    if let Some(path) = &paths.html {
        write_reports_file(path, report::html::to_html(report, secrets))?;
    }
    if let Some(path) = &paths.sarif {
        let sarif = report::sarif::to_sarif(report, secrets, paths.sarif_source.as_deref());
        write_reports_file(path, sarif)?;
    }
    if let Some(path) = &paths.json {
        if is_stdout(Some(path)) {
            outln!("{}", report::json::to_json(report, secrets).trim_end());
        } else {
            write_reports_file(path, report::json::to_json(report, secrets))?;
        }
    }
    Ok(())
}
