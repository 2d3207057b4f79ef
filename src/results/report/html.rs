//! A single self-contained HTML report: suites, steps, failures with diffs, redacted
//! transcripts and durations, in one file that opens offline (inline CSS and a few lines of
//! script, no external resource).
//!
//! Built from the same [`RunReport`] as every other reporter. Failed, errored and warning
//! steps render as open `<details>`, so their failures show without a click; passing steps
//! are collapsed. The script only adds the status filter buttons; without it the page is
//! complete. Every text is redacted, escaped for HTML and cut like the JUnit bodies.

use std::fmt::Write as _;

use super::diff::Tag;

use super::console::{json_diff, secs};
use super::page::{Page, escape_html};
use super::result::{RunReport, StepResult, SuiteResult, SuiteStatus};
use super::transcript::format_transcript;
use crate::ground::redact::escape_controls;
use crate::results::outcome::{Failure, Outcome};

/// Largest transcript or failure body shown for one step (the rest is cut with a marker).
const MAX_BODY_BYTES: usize = 64 * 1024;

/// Filters suites by status; the page is complete without it.
const SCRIPT: &str = r#"
(function(){
  var bar=document.getElementById('filters');
  var suites=Array.prototype.slice.call(document.querySelectorAll('section.suite'));
  function show(status){
    suites.forEach(function(s){s.hidden=!(status==='ALL'||s.getAttribute('data-status')===status);});
    Array.prototype.forEach.call(bar.querySelectorAll('button'),function(b){b.className=b.getAttribute('data-status')===status?'on':'';});
  }
  ['ALL','FAIL','ERROR','WARN','XFAIL','PASS','SKIP'].forEach(function(status){
    var n=status==='ALL'?suites.length:suites.filter(function(s){return s.getAttribute('data-status')===status;}).length;
    if(status!=='ALL'&&n===0)return;
    var b=document.createElement('button');b.type='button';b.setAttribute('data-status',status);
    b.textContent=status.toLowerCase()+' ('+n+')';b.addEventListener('click',function(){show(status);});bar.appendChild(b);
  });
  show('ALL');
  document.body.setAttribute('data-ready','1');
})();
"#;

/// Render the run as one HTML document.
pub fn to_html(report: &RunReport, secrets: &[String]) -> String {
    let (page, mut out) = Page::begin(secrets, "mcpspec report", &report.target, "", 16 * 1024);
    let s = &report.summary;
    let _ = writeln!(
        out,
        "<h1>mcpspec report</h1><div class=\"meta\">{} · {} · started {} · {} · mcpspec {}</div>",
        page.text(&report.target),
        page.text(&report.transport),
        page.text(&report.started_at),
        secs(report.duration),
        page.text(&report.mcpspec_version),
    );
    let verdict = if s.is_green() { "PASS" } else { "FAIL" };
    let _ = writeln!(
        out,
        "<div class=\"totals\" id=\"totals\"><span class=\"badge b-{verdict}\">{verdict}</span>\
         <span>{} suites</span><span>{} steps</span><span>{} passed</span><span>{} failed</span>\
         <span>{} errors</span><span>{} warnings</span><span>{} skipped</span><span>{} expected failures</span></div>",
        s.suites, s.steps, s.passed, s.failed, s.errors, s.warnings, s.skipped, s.expected_failures
    );
    if let Some(signal) = &report.interrupted {
        let _ = writeln!(
            out,
            "<p class=\"setup\">interrupted by {}: unfinished suites are errors</p>",
            page.text(signal)
        );
    }
    for stale in &report.stale_entries {
        let _ = writeln!(
            out,
            "<p class=\"setup\">stale expected-failures entry {} ({}:{}): {}</p>",
            page.text(&stale.entry),
            page.text(&stale.file),
            stale.line,
            page.text(&stale.message)
        );
    }
    out.push_str("<nav class=\"filters\" id=\"filters\"></nav>\n");
    for suite in &report.suites {
        page.suite(&mut out, suite);
    }
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body></html>\n");
    out
}

impl Page {
    fn suite(&self, out: &mut String, suite: &SuiteResult) {
        let status = suite.status();
        let label = status.label();
        let _ = writeln!(
            out,
            "<section class=\"suite\" data-status=\"{label}\" id=\"{}\"><header>\
             <span class=\"badge b-{label}\">{label}</span><h2>{}</h2><span class=\"where\">{}:{}{}</span>\
             <span class=\"dur\">{}</span></header>",
            self.text(&suite.id),
            self.text(&suite.id),
            self.text(&suite.file),
            suite.line,
            suite
                .pack
                .as_deref()
                .map(|p| format!(" · pack {}", self.text(p)))
                .unwrap_or_default(),
            secs(suite.duration)
        );
        if let Some(description) = &suite.description {
            let _ = writeln!(out, "<p>{}</p>", self.text(description));
        }
        let mut era = format!("era requested: {}", suite.era.requested);
        if let Some(negotiated) = &suite.era.negotiated {
            let _ = write!(era, " · negotiated: {negotiated}");
        }
        if let Some(note) = &suite.era.note {
            let _ = write!(era, " · {note}");
        }
        let _ = writeln!(out, "<div class=\"where\">{}</div>", self.text(&era));
        if let Some(error) = &suite.setup_error {
            let _ = writeln!(out, "<p class=\"setup\">{}</p>", self.text(error));
        }
        for step in &suite.steps {
            self.step(out, step);
        }
        if let Some(tail) = suite
            .stderr_tail
            .as_deref()
            .filter(|t| !t.trim().is_empty())
        {
            let _ = writeln!(
                out,
                "<details class=\"step\"{}><summary>server stderr (last lines)</summary><pre>{}</pre></details>",
                if matches!(status, SuiteStatus::Pass | SuiteStatus::Xfail) {
                    ""
                } else {
                    " open"
                },
                self.body(tail, MAX_BODY_BYTES)
            );
        }
        out.push_str("</section>\n");
    }

    fn step(&self, out: &mut String, step: &StepResult) {
        let status = step.outcome.status();
        let open = matches!(
            step.outcome,
            Outcome::Failed { .. } | Outcome::Error { .. } | Outcome::Warning { .. }
        );
        let _ = writeln!(
            out,
            "<details class=\"step\" data-status=\"{status}\"{}><summary><span class=\"badge b-{status}\">{}</span>\
             <span>{}</span><span class=\"where\">{}:{}:{} · {}</span><span class=\"dur\">{}</span></summary>",
            if open { " open" } else { "" },
            status_word(&step.outcome),
            self.text(&step.name),
            self.text(&step.file),
            step.line,
            step.column,
            match step.level {
                crate::results::outcome::Level::Must => "must",
                crate::results::outcome::Level::Should => "should",
            },
            secs(step.duration)
        );
        match &step.outcome {
            Outcome::Error { message, detail } => {
                let _ = writeln!(
                    out,
                    "<div class=\"failure\"><div class=\"msg\">{}</div>",
                    self.text(message)
                );
                if let Some(detail) = detail {
                    let _ = write!(out, "<pre>{}</pre>", self.body(detail, MAX_BODY_BYTES));
                }
                out.push_str("</div>\n");
            }
            Outcome::Skipped { reason } => {
                let _ = writeln!(out, "<p class=\"where\">skipped: {}</p>", self.text(reason));
            }
            Outcome::ExpectedFailure { entry, .. } => {
                let _ = writeln!(
                    out,
                    "<p class=\"where\">expected failure (baseline entry {})</p>",
                    self.text(entry)
                );
            }
            _ => {}
        }
        for failure in step.outcome.failures() {
            self.failure(out, failure);
        }
        for note in &step.notes {
            let _ = writeln!(out, "<p class=\"where\">note: {}</p>", self.text(note));
        }
        if !step.transcript.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>transcript</summary><pre>{}</pre></details>",
                self.body(&format_transcript(&step.transcript), MAX_BODY_BYTES)
            );
        }
        out.push_str("</details>\n");
    }

    fn failure(&self, out: &mut String, failure: &Failure) {
        let _ = write!(
            out,
            "<div class=\"failure\"><div class=\"msg\">[{}] {}</div><div class=\"where\">{}:{}:{}</div>",
            self.text(&failure.kind),
            self.text(&failure.finding.message),
            self.text(&failure.file),
            failure.line,
            failure.column
        );
        let diff = match (&failure.finding.expected, &failure.finding.actual) {
            (Some(e), Some(a)) => json_diff(&self.redactor.redact(e), &self.redactor.redact(a)),
            _ => None,
        };
        if let Some(lines) = diff {
            out.push_str("<pre class=\"diff\">");
            for (tag, line) in lines {
                let (class, sign) = match tag {
                    Tag::Insert => ("add", '+'),
                    Tag::Delete => ("del", '-'),
                    Tag::Equal => ("", ' '),
                };
                let _ = writeln!(
                    out,
                    "<span class=\"{class}\">{sign} {}</span>",
                    escape_html(&escape_controls(&line))
                );
            }
            out.push_str("</pre>");
        } else {
            if let Some(expected) = &failure.finding.expected {
                let _ = write!(
                    out,
                    "<div>expected:</div><pre>{}</pre>",
                    self.body(expected, MAX_BODY_BYTES)
                );
            }
            if let Some(actual) = &failure.finding.actual {
                let _ = write!(
                    out,
                    "<div>actual:</div><pre>{}</pre>",
                    self.body(actual, MAX_BODY_BYTES)
                );
            }
        }
        if !failure.snippet.is_empty() {
            let _ = write!(
                out,
                "<pre>{}</pre>",
                self.body(&failure.snippet, MAX_BODY_BYTES)
            );
        }
        out.push_str("</div>\n");
    }
}

fn status_word(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "pass",
        Outcome::Failed { .. } => "fail",
        Outcome::Warning { .. } => "warn",
        Outcome::Error { .. } => "error",
        Outcome::Skipped { .. } => "skip",
        Outcome::ExpectedFailure { .. } => "xfail",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape_html("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }
}
