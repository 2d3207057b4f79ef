//! `mcpspec load compare`: two load reports side by side, with the changes past the thresholds.

use super::emit;
use super::render::ms;
use crate::face::cli::exit;
use crate::results::junit::{Policy, TestCaseStatus, TestSuite};
use crate::run::load::{self};

/// `mcpspec load compare BASE CANDIDATE`.
pub(super) fn compare(args: &crate::face::cli::CompareArgs) -> i32 {
    let read = |p: &std::path::Path| -> Result<serde_json::Value, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", p.display()))
    };
    let tolerance = args.tolerance.unwrap_or(10.0);
    let error_tolerance = args.error_tolerance.unwrap_or(0.0);
    let changes = match read(&args.base).and_then(|b| {
        let c = read(&args.candidate)?;
        load::compare::compare(&b, &c, tolerance, error_tolerance)
    }) {
        Ok(c) => c,
        Err(e) => {
            errln!("error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:+.1}%"));
    let mut out = vec![format!(
        "compare: {} → {} (tolerance {tolerance}% on p50/p99 when significant at p < {}, {error_tolerance} points on error rates)",
        args.base.display(),
        args.candidate.display(),
        load::compare::ALPHA
    )];
    for c in &changes {
        out.push(format!(
            "  {} {}: p50 {} → {} ({}), p99 {} → {} ({}), errors {:.2}% → {:.2}%, p = {}{}",
            if c.regressed { "✗" } else { "✓" },
            c.name,
            ms(c.base_p50_ms),
            ms(c.candidate_p50_ms),
            pct(c.p50_change),
            ms(c.base_p99_ms),
            ms(c.candidate_p99_ms),
            pct(c.p99_change),
            c.base_error_rate,
            c.candidate_error_rate,
            c.p_value.map_or("-".into(), |p| format!("{p:.4}")),
            if c.why.is_empty() {
                String::new()
            } else {
                format!(" — regressed: {}", c.why.join("; "))
            }
        ));
    }
    let regressed = changes.iter().filter(|c| c.regressed).count();
    out.push(if regressed == 0 {
        "result: no regression".into()
    } else {
        format!("result: {regressed} regression(s)")
    });
    let junit = args.junit.as_deref().map(|path| {
        let policy = Policy::known();
        let mut suite = TestSuite::new(policy.text("load compare"));
        for c in &changes {
            let status = if c.regressed {
                policy.failure("regression", &c.why.join("; "), None)
            } else {
                TestCaseStatus::success()
            };
            suite.add_test_case(policy.case(&c.name, "mcpspec.load.compare", status));
        }
        let xml = crate::results::junit::document(
            "mcpspec load compare",
            None,
            None,
            [suite],
            args.junit_flavor.unwrap_or_default(),
        );
        (path, xml)
    });
    let report = serde_json::json!({ "changes": changes });
    if let Err(code) = emit(
        &out.join("\n"),
        args.json.as_deref(),
        junit,
        None,
        &report,
        &[],
    ) {
        return code;
    }
    if regressed == 0 {
        exit::OK
    } else {
        exit::FAILED
    }
}
