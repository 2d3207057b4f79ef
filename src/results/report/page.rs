//! The scaffolding every HTML page of mcpspec shares (the run report, the load report, the
//! eval reports): the document's head with the inline styles, and text made safe to show —
//! redacted of the run's secrets, control characters escaped, then escaped for HTML.

use std::fmt::Write as _;

use super::html::{STYLE, escape_html};
use crate::ground::redact::{Redactor, escape_controls};
use crate::results::junit::truncate;

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
