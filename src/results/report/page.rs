//! The scaffolding every HTML page of mcpspec shares (the run report, the load report, the
//! eval reports): the document's head with the inline styles, and text made safe to show —
//! redacted of the run's secrets, control characters escaped, then escaped for HTML.

use std::fmt::Write as _;

use crate::ground::redact::{Redactor, escape_controls};
use crate::results::junit::truncate;

/// The styles every page starts from (the run report's; the load and eval pages add theirs).
pub const STYLE: &str = r#"
:root{--pass:#1a7f37;--fail:#cf222e;--error:#9a6700;--warn:#bc4c00;--skip:#6e7781;--bg:#fff;--fg:#1f2328;--muted:#656d76;--line:#d0d7de}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:24px;max-width:1200px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:0}.meta{color:var(--muted);margin-bottom:16px}
.totals span{display:inline-block;margin-right:14px}.badge{display:inline-block;min-width:52px;text-align:center;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;color:#fff}
.b-PASS,.b-passed{background:var(--pass)}.b-FAIL,.b-failed{background:var(--fail)}.b-ERROR,.b-error{background:var(--error)}.b-WARN,.b-warning{background:var(--warn)}.b-SKIP,.b-XFAIL,.b-skipped,.b-expectedFailure{background:var(--skip)}
.filters{margin:12px 0}.filters button{margin-right:6px;border:1px solid var(--line);background:#f6f8fa;border-radius:6px;padding:3px 10px;cursor:pointer}.filters button.on{background:#ddf4ff;border-color:#54aeff}
section.suite{border:1px solid var(--line);border-radius:8px;margin:10px 0;padding:8px 12px}
section.suite>header{display:flex;gap:10px;align-items:center}.dur{color:var(--muted);margin-left:auto;font-variant-numeric:tabular-nums}
details.step{border-top:1px solid var(--line);padding:4px 0}details.step>summary{cursor:pointer;display:flex;gap:10px;align-items:center}
.where{color:var(--muted);font-size:12px}pre{background:#f6f8fa;border-radius:6px;padding:8px;overflow:auto;white-space:pre-wrap;word-break:break-word;margin:6px 0}
.failure{border-left:3px solid var(--fail);padding-left:10px;margin:6px 0}.failure .msg{font-weight:600}
.diff .add{color:var(--pass)}.diff .del{color:var(--fail)}.setup{color:var(--fail);font-weight:600}
"#;

/// Escape the five characters HTML gives a meaning to, in text and in quoted attributes.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Tables of figures (load and eval pages), after [`STYLE`].
pub const TABLE_STYLE: &str = r#"
table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:3px 10px;text-align:left;vertical-align:top}
td.num,th.num{text-align:right}tr.failed td{background:#ffebe9}
"#;

/// A page being written: its redactor (the text so far is the caller's `String`).
pub struct Page {
    pub redactor: Redactor,
}

impl Page {
    /// A page's redactor, and its text so far: the document's head, titled `title: subject`
    /// (the subject redacted and escaped), with [`STYLE`] then `style`.
    pub fn begin(
        secrets: &[String],
        title: &str,
        subject: &str,
        style: &str,
        capacity: usize,
    ) -> (Page, String) {
        let page = Page {
            redactor: Redactor::new(secrets),
        };
        let mut out = String::with_capacity(capacity);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
             <title>{title}: {}</title><style>{STYLE}{style}</style></head><body>\n",
            page.text(subject)
        );
        (page, out)
    }

    /// Redacted, controls escaped, then escaped for HTML.
    pub fn text(&self, text: &str) -> String {
        escape_html(&escape_controls(&self.redactor.redact(text)))
    }

    /// Like [`Page::text`], cut to `max` bytes after redaction (with a marker).
    pub fn body(&self, text: &str, max: usize) -> String {
        let redacted = escape_controls(&self.redactor.redact(text)).into_owned();
        escape_html(&truncate(&redacted, max))
    }

    /// A two-column table of `(label, value)` rows, the values escaped here.
    pub fn pairs(&self, out: &mut String, id: &str, rows: &[(&str, String)]) {
        let _ = writeln!(out, "<table class=\"{id}\" id=\"{id}\">");
        for (label, value) in rows {
            let _ = writeln!(
                out,
                "<tr><th>{label}</th><td>{}</td></tr>",
                self.text(value)
            );
        }
        out.push_str("</table>\n");
    }
}
