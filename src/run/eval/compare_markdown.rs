//! The Markdown summary of `eval compare --markdown` (for `$GITHUB_STEP_SUMMARY` and a
//! pull-request comment): the verdict, the counts per bucket, the regressions with why, the
//! judge-score changes and what each run spent. Task ids, file names and reasons are
//! untrusted text: redacted, on one line, HTML-escaped (GitHub renders HTML in Markdown) and
//! with Markdown's punctuation escaped, so no cell can break its table or inject markup.
//! Tables are cut at [`MAX_ROWS`] rows (a comment holds at most 65536 characters).

use super::compare::{Comparison, TaskDelta, pct};
use super::compare_output::{Labels, arrow, verdict};
use super::compare_view::{Spend, View};
use crate::ground::redact::{Redactor, escape_controls};
use crate::results::report::page::escape_html;

/// Most rows of one table; the rest are counted.
pub const MAX_ROWS: usize = 50;

/// The summary, every text redacted of `secrets`.
pub fn to_markdown(c: &Comparison, labels: &Labels, spend: &Spend, secrets: &[String]) -> String {
    let md = Md(Redactor::new(secrets));
    let view = View::of(c);
    let mark = if c.incomplete.is_some() || c.regression {
        "❌"
    } else {
        "✅"
    };
    let mut s = format!(
        "### mcpspec eval compare: {}\n\n{mark} **{}**\n\nbase: {} · candidate: {} · pass rate {}\n\n",
        md.text(&c.set),
        md.text(&verdict(c)),
        md.text(labels.base),
        md.text(labels.candidate),
        pct(c.pass_rate)
    );
    for line in c.incomplete.iter().chain(&c.warnings) {
        s.push_str(&format!("> {}\n\n", md.text(line)));
    }
    let drops = view.judge_changes.iter().filter(|j| j.flagged).count();
    s.push_str("| regressions | improvements | unchanged | missing or never judged | judge-score drops |\n|---:|---:|---:|---:|---:|\n");
    s.push_str(&format!(
        "| {} | {} | {} | {} | {drops} |\n\n",
        view.regressions.len(),
        view.improvements.len(),
        view.unchanged.len(),
        view.missing.len()
    ));
    let st = &c.success;
    s.push_str(&format!(
        "Success rate {} → {} (Δ {:+.1} pp, McNemar exact p {:.4}).",
        pct(st.base),
        pct(st.candidate),
        st.delta * 100.0,
        st.mcnemar.p
    ));
    if let Some(j) = &c.judge {
        s.push_str(&format!(
            " Judge score {:.2} → {:.2} (Δ {:+.2}, {} task(s)).",
            j.base, j.candidate, j.delta, j.tasks
        ));
    }
    s.push_str("\n\n");
    regressions(&md, &mut s, &view.regressions);
    missing(&md, &mut s, &view.missing);
    judge_changes(&md, &mut s, &view);
    s.push_str("#### Cost\n\n| | base | candidate |\n|---|---|---|\n");
    for (label, base, cand) in spend.rows() {
        s.push_str(&format!(
            "| {label} | {} | {} |\n",
            md.text(&base),
            md.text(&cand)
        ));
    }
    s
}

/// Text made safe for a Markdown table cell.
struct Md(Redactor);

impl Md {
    fn text(&self, text: &str) -> String {
        let one_line = self.0.redact(text).replace(['\n', '\r'], " ");
        let html = escape_html(&escape_controls(&one_line));
        let mut out = String::with_capacity(html.len());
        for ch in html.chars() {
            if "\\`*_[]|~".contains(ch) {
                out.push('\\');
            }
            out.push(ch);
        }
        out
    }
}

/// Rows past [`MAX_ROWS`], said under the table.
fn more(s: &mut String, total: usize) {
    if total > MAX_ROWS {
        s.push_str(&format!("\n… and {} more\n", total - MAX_ROWS));
    }
    s.push('\n');
}

fn success(t: &TaskDelta) -> String {
    let f = |x: &super::compare::Side| format!("{}/{}", x.successes, x.trials);
    arrow(t.base.as_ref().map(f), t.candidate.as_ref().map(f))
}

fn regressions(md: &Md, s: &mut String, tasks: &[&TaskDelta]) {
    if tasks.is_empty() {
        return;
    }
    s.push_str("#### Regressions\n\n| task | bucket | success | why |\n|---|---|---|---|\n");
    for t in tasks.iter().take(MAX_ROWS) {
        let why: Vec<String> = t.findings.iter().map(|f| md.text(&f.describe())).collect();
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            md.text(&t.id),
            t.bucket.label(),
            success(t),
            why.join("<br>")
        ));
    }
    more(s, tasks.len());
}

fn missing(md: &Md, s: &mut String, tasks: &[&TaskDelta]) {
    if tasks.is_empty() {
        return;
    }
    s.push_str("#### Missing or never judged\n\n| task | bucket |\n|---|---|\n");
    for t in tasks.iter().take(MAX_ROWS) {
        s.push_str(&format!("| {} | {} |\n", md.text(&t.id), t.bucket.label()));
    }
    more(s, tasks.len());
}

fn judge_changes(md: &Md, s: &mut String, view: &View) {
    if view.judge_changes.is_empty() {
        return;
    }
    s.push_str(
        "#### Judge-score changes\n\n| task | base | candidate | Δ | |\n|---|---:|---:|---:|---|\n",
    );
    for j in view.judge_changes.iter().take(MAX_ROWS) {
        s.push_str(&format!(
            "| {} | {:.2} | {:.2} | {:+.2} | {} |\n",
            md.text(&j.task.id),
            j.base,
            j.candidate,
            j.candidate - j.base,
            if j.flagged { "drop past the limit" } else { "" }
        ));
    }
    more(s, view.judge_changes.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_cannot_break_its_table_or_inject_markup() {
        let md = Md(Redactor::new(&["sekret-value".to_string()]));
        assert_eq!(
            md.text("a|b\n<script>*x* [l](u) `c` sekret-value"),
            "a\\|b &lt;script&gt;\\*x\\* \\[l\\](u) \\`c\\` \\*\\*\\*"
        );
    }
}
