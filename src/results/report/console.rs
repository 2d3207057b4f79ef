//! Console reporter: one line per suite as it finishes, details only for what did not
//! pass, and a final summary. Output is deterministic apart from durations (always printed
//! as `\d+\.\d{3}s`), so golden tests can mask those.

use std::fmt::Write as _;
use std::time::Duration;

use anstyle::{AnsiColor, Style};

use super::diff::{self, Tag};
use super::result::{RunReport, StepResult, SuiteResult, SuiteStatus};
use super::transcript::format_transcript;
use crate::ground::redact::{Redactor, count_masks, escape_controls};
use crate::results::outcome::{Failure, Outcome};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How to render console output. The caller decides `color` (TTY, `NO_COLOR`, `--color`).
#[derive(Clone, Default)]
pub struct ConsoleOptions {
    pub color: bool,
    /// Also print passing steps and every step's transcript.
    pub verbose: bool,
    /// Values replaced with `***` in everything printed.
    pub secrets: Vec<String>,
    /// Shared by the clones: the redactor and the masks printed so far.
    pub redaction: Redaction,
}

/// What the console's redaction keeps across suites: the redactor (built from `secrets`
/// and the process's known secrets on first use, again only once the run has learned a
/// secret since — a secret-named var rendered by a template) and how many masks were
/// printed (the summary's note).
#[derive(Clone, Default)]
pub struct Redaction {
    redactor: Arc<Mutex<Option<Built>>>,
    masks: Arc<AtomicUsize>,
}

/// A redactor and how many process-known values it was built with.
type Built = (usize, Arc<Redactor>);

impl Redaction {
    fn redactor(&self, secrets: &[String]) -> Arc<Redactor> {
        let known = crate::ground::redact::known();
        let mut slot = self.redactor.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((n, r)) = &*slot
            && *n == known.values().len()
        {
            return r.clone();
        }
        let mut all = secrets.to_vec();
        all.extend(known.values().iter().cloned());
        let r = Arc::new(Redactor::new(&all));
        *slot = Some((known.values().len(), r.clone()));
        r
    }
}

impl std::fmt::Debug for ConsoleOptions {
    /// Never prints the secrets themselves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleOptions")
            .field("color", &self.color)
            .field("verbose", &self.verbose)
            .field(
                "secrets",
                &format_args!("[{} redacted]", self.secrets.len()),
            )
            .finish()
    }
}

/// Indentation of step lines under a suite line.
const STEP_INDENT: &str = "  ";
/// Indentation of a step's details (snippets, expected/actual, transcript).
const DETAIL_INDENT: &str = "      ";

struct Printer<'a> {
    opts: &'a ConsoleOptions,
    redactor: Arc<Redactor>,
    out: String,
}

impl<'a> Printer<'a> {
    fn new(opts: &'a ConsoleOptions) -> Self {
        Printer {
            opts,
            redactor: opts.redaction.redactor(&opts.secrets),
            out: String::new(),
        }
    }

    /// Every text from the run goes through here: redacted, then with control characters
    /// escaped (a server's ESC/OSC sequences must not drive the terminal).
    fn redact(&self, text: &str) -> String {
        let text = escape_controls(&self.redactor.redact(text)).into_owned();
        let masks = count_masks(&text);
        if masks > 0 {
            self.opts
                .redaction
                .masks
                .fetch_add(masks, Ordering::Relaxed);
        }
        text
    }

    fn paint(&self, style: Style, text: &str) -> String {
        if self.opts.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// A status word padded to 5 columns (padding outside the colored part).
    fn word(&self, word: &str) -> String {
        let style = match word {
            "PASS" => Style::new().fg_color(Some(AnsiColor::Green.into())).bold(),
            "FAIL" | "ERROR" => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
            "WARN" => Style::new().fg_color(Some(AnsiColor::Yellow.into())).bold(),
            "SKIP" | "XFAIL" => Style::new().dimmed(),
            _ => Style::new(),
        };
        let pad = " ".repeat(5usize.saturating_sub(word.len()));
        format!("{}{pad}", self.paint(style, word))
    }

    fn line(&mut self, text: &str) {
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Print (already redacted or trusted) multi-line text, each line indented.
    fn block(&mut self, indent: &str, text: &str) {
        for line in text.trim_end_matches('\n').lines() {
            if line.is_empty() {
                self.out.push('\n');
            } else {
                let _ = writeln!(self.out, "{indent}{line}");
            }
        }
    }

    fn suite(&mut self, suite: &SuiteResult, seen: Option<&mut Seen>) {
        let (setup_repeat, note_new) = match seen {
            Some(seen) => seen.admit(suite),
            None => (false, false),
        };
        let status = suite.status();
        let mut head = format!("{} {}", self.word(status.label()), self.redact(&suite.id));
        if let Some(rev) = &suite.era.negotiated {
            let _ = write!(head, " ({})", self.redact(rev));
        }
        let _ = write!(head, " {}", secs(suite.duration));
        if setup_repeat {
            head.push_str(" (the same setup error as above)");
        }
        self.line(&head);

        let verbose = self.opts.verbose;
        if (verbose || note_new)
            && let Some(note) = &suite.era.note
        {
            let note = self.redact(note);
            self.line(&format!("{STEP_INDENT}era: {note}"));
        }
        if let Some(err) = suite.setup_error.as_ref().filter(|_| !setup_repeat) {
            let err = self.redact(err);
            let mut lines = err.lines();
            let first = lines.next().unwrap_or_default();
            let word = self.word("ERROR");
            self.line(&format!("{STEP_INDENT}{word} setup: {first}"));
            let rest: Vec<&str> = lines.collect();
            self.block(DETAIL_INDENT, &rest.join("\n"));
        }
        let show_problems = verbose || status != SuiteStatus::Pass;
        for step in &suite.steps {
            let passing = matches!(step.outcome, Outcome::Passed);
            // A step with notes (an expectation that matched nothing) is shown even when
            // it passed: a pass that checked nothing is not silent.
            if verbose || (show_problems && !passing) || !step.notes.is_empty() {
                self.step(step);
            }
        }
        if let Some(tail) = suite
            .stderr_tail
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            && (verbose || !matches!(status, SuiteStatus::Pass | SuiteStatus::Xfail))
        {
            let tail = self.redact(tail);
            self.line(&format!("{STEP_INDENT}server stderr (last lines):"));
            for line in tail.trim_end().lines() {
                self.line(&format!("{DETAIL_INDENT}| {line}"));
            }
        }
    }

    fn step(&mut self, step: &StepResult) {
        let verbose = self.opts.verbose;
        let name = self.redact(&step.name);
        let time = if verbose {
            format!(" {}", secs(step.duration))
        } else {
            String::new()
        };
        match &step.outcome {
            Outcome::Passed => {
                let word = self.word("PASS");
                self.line(&format!("{STEP_INDENT}{word} {name}{time}"));
            }
            Outcome::Failed { failures } => {
                let word = self.word("FAIL");
                self.line(&format!("{STEP_INDENT}{word} {name}{time}"));
                self.failures(failures);
            }
            Outcome::Warning { failures } => {
                let word = self.word("WARN");
                self.line(&format!("{STEP_INDENT}{word} {name}{time}"));
                self.failures(failures);
            }
            Outcome::Error { message, detail } => {
                let word = self.word("ERROR");
                let message = self.redact(message);
                self.line(&format!("{STEP_INDENT}{word} {name}: {message}{time}"));
                if let Some(detail) = detail {
                    let detail = self.redact(detail);
                    self.block(DETAIL_INDENT, &detail);
                }
            }
            Outcome::Skipped { reason } => {
                let word = self.word("SKIP");
                let reason = self.redact(reason);
                self.line(&format!("{STEP_INDENT}{word} {name} ({reason}){time}"));
            }
            Outcome::ExpectedFailure { failures, entry } => {
                let word = self.word("XFAIL");
                let entry = self.redact(entry);
                self.line(&format!(
                    "{STEP_INDENT}{word} {name} (baseline entry: {entry}){time}"
                ));
                if verbose {
                    self.failures(failures);
                }
            }
        }
        for note in &step.notes {
            let note = self.redact(note);
            self.line(&format!("{DETAIL_INDENT}note: {note}"));
        }
        if verbose && !step.transcript.is_empty() {
            let transcript = self.redact(&format_transcript(&step.transcript));
            self.block(DETAIL_INDENT, &transcript);
        }
    }

    fn failures(&mut self, failures: &[Failure]) {
        for failure in failures {
            self.failure(failure);
        }
    }

    fn failure(&mut self, failure: &Failure) {
        if failure.snippet.trim().is_empty() {
            let text = format!(
                "{}:{}:{}: {}",
                failure.file, failure.line, failure.column, failure.finding.message
            );
            let text = self.redact(&text);
            self.block(DETAIL_INDENT, &text);
        } else {
            let snippet = self.redact(&failure.snippet);
            self.block(DETAIL_INDENT, &snippet);
        }
        let expected = failure.finding.expected.as_deref().map(|e| self.redact(e));
        let actual = failure.finding.actual.as_deref().map(|a| self.redact(a));
        if let (Some(expected), Some(actual)) = (&expected, &actual)
            && let Some(diff) = json_diff(expected, actual)
        {
            self.line(&format!("{DETAIL_INDENT}diff (- expected, + actual):"));
            for (tag, line) in diff {
                let (sign, style) = match tag {
                    Tag::Delete => ("-", Style::new().fg_color(Some(AnsiColor::Red.into()))),
                    Tag::Insert => ("+", Style::new().fg_color(Some(AnsiColor::Green.into()))),
                    Tag::Equal => (" ", Style::new()),
                };
                let text = if tag == Tag::Equal {
                    format!("{sign}{line}")
                } else {
                    self.paint(style, &format!("{sign}{line}"))
                };
                self.line(format!("{DETAIL_INDENT}{text}").trim_end());
            }
            return;
        }
        if let Some(expected) = &expected {
            self.labelled("expected:", expected);
        }
        if let Some(actual) = &actual {
            self.labelled("actual:  ", actual);
        }
    }

    fn labelled(&mut self, label: &str, value: &str) {
        let value = value.trim_end_matches('\n');
        if value.contains('\n') {
            self.line(&format!("{DETAIL_INDENT}{}", label.trim_end()));
            self.block(&format!("{DETAIL_INDENT}  "), value);
        } else {
            self.line(&format!("{DETAIL_INDENT}{label} {value}"));
        }
    }
}

/// When both sides are multi-line JSON documents, the lines of a unified diff between them
/// (pretty-printed the same way so formatting differences do not show).
pub(super) fn json_diff(expected: &str, actual: &str) -> Option<Vec<(Tag, String)>> {
    if !expected.trim().contains('\n') || !actual.trim().contains('\n') {
        return None;
    }
    let e: serde_json::Value = serde_json::from_str(expected).ok()?;
    let a: serde_json::Value = serde_json::from_str(actual).ok()?;
    let e = serde_json::to_string_pretty(&e).ok()?;
    let a = serde_json::to_string_pretty(&a).ok()?;
    let lines = diff::unified(&e, &a);
    if lines.is_empty() { None } else { Some(lines) }
}

pub(super) fn secs(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

/// Render one finished suite: its status line and, when it did not pass (or `verbose`),
/// its steps with failure details. Ends with a newline.
pub fn render_suite(suite: &SuiteResult, opts: &ConsoleOptions) -> String {
    let mut printer = Printer::new(opts);
    printer.suite(suite, None);
    printer.out
}

/// What a streamed run has printed so far, so that what concerns the target rather than
/// one suite is said once: a setup error shared by several suites (an unreachable target,
/// an era the server refuses) and how `auto` chose its era (modern or legacy, and why).
#[derive(Default)]
pub struct Seen {
    setup_errors: std::collections::HashSet<String>,
    era_notes: std::collections::HashSet<String>,
}

impl Seen {
    /// Whether the suite's setup error was printed before, and whether its era note is an
    /// `auto` choice not printed before (both remembered).
    fn admit(&mut self, suite: &SuiteResult) -> (bool, bool) {
        let repeat = suite
            .setup_error
            .as_ref()
            .is_some_and(|e| !self.setup_errors.insert(e.clone()));
        // Which era `auto` chose and why, either way: once per distinct reason.
        let auto = suite.era.requested == "auto";
        let note = auto
            && suite.era.note.as_ref().is_some_and(|n| {
                let reason = n.strip_suffix(crate::protocol::era::DECIDED_ONCE);
                self.era_notes.insert(reason.unwrap_or(n).to_string())
            });
        (repeat, note)
    }
}

/// [`render_suite`] in a streamed run: what `seen` says was printed already is not
/// repeated.
pub fn render_streamed(suite: &SuiteResult, opts: &ConsoleOptions, seen: &mut Seen) -> String {
    let mut printer = Printer::new(opts);
    printer.suite(suite, Some(seen));
    printer.out
}

/// Where the time of a stdio run goes: the processes started and what starting them took;
/// the shared processes that went wrong and were replaced.
fn servers_line(servers: &crate::results::report::result::ServerStats) -> String {
    let mut out = format!(
        "Server processes: {} started ({} starting them)",
        servers.started,
        secs(servers.starting)
    );
    if servers.warm > 0 {
        let _ = write!(out, ", {} scenario(s) ran on a warm one", servers.warm);
    }
    out.push('\n');
    for replaced in &servers.replaced {
        let _ = writeln!(out, "  replaced: {replaced}");
    }
    if servers.sandboxed {
        out.push_str(&sandbox_note(&servers.reached_out));
    }
    out
}

/// Under `--sandbox` (`run` and `load`): that the server ran sandboxed, and the tools whose
/// answers show a failed connection (they tried to reach out), one line each.
pub fn sandbox_note(reached_out: &[String]) -> String {
    let mut out = String::from(
        "Sandbox (--sandbox): the server ran with no route out of the machine and a private HOME\n",
    );
    if !reached_out.is_empty() {
        out.push_str("  tools whose answers show a failed connection (they tried to reach out):\n");
    }
    for tool in reached_out {
        let _ = writeln!(out, "  - {tool}");
    }
    out
}

/// Render the final summary: one `Summary:` line with every count (steps, as in the JSON
/// report's `summary`; the JUnit totals are the same counts, see its mapping), then, when
/// a signal stopped the run, which suites it left unfinished.
pub fn render_summary(report: &RunReport, opts: &ConsoleOptions) -> String {
    let printer = Printer::new(opts);
    let s = &report.summary;
    let style = |color: AnsiColor| Style::new().fg_color(Some(color.into())).bold();
    let count = |n: usize, what: &str, color: AnsiColor| {
        let text = format!("{n} {what}");
        if n > 0 {
            printer.paint(style(color), &text)
        } else {
            text
        }
    };
    let passed = if s.is_green() {
        count(s.passed, "passed", AnsiColor::Green)
    } else {
        format!("{} passed", s.passed)
    };
    let mut out = format!(
        "Summary: {} suites, {} steps: {passed}, {}, {}, {} warnings, {} skipped",
        s.suites,
        s.steps,
        count(s.failed, "failed", AnsiColor::Red),
        count(s.errors, "errors", AnsiColor::Red),
        s.warnings,
        s.skipped
    );
    if s.expected_failures > 0 {
        let _ = write!(out, ", {} expected failures", s.expected_failures);
    }
    let _ = writeln!(out, " in {}", secs(report.duration));
    if let Some(servers) = &report.servers {
        out.push_str(&servers_line(servers));
    }
    for m in &report.models {
        let _ = write!(
            out,
            "Sampling model `{}`: {} answer(s), {} input + {} output tokens",
            m.profile, m.requests, m.input_tokens, m.output_tokens
        );
        match m.cost_usd {
            Some(usd) => {
                let _ = writeln!(out, ", about ${usd:.4}");
            }
            None => out.push('\n'),
        }
    }
    if let Some(signal) = &report.interrupted {
        let _ = writeln!(
            out,
            "Interrupted by {signal}: {} of {} suites did not finish (reported as `interrupted` errors)",
            s.interrupted, s.suites
        );
    }
    let masks = opts.redaction.masks.load(Ordering::Relaxed);
    if masks > 0 {
        out.insert_str(
            0,
            &format!("note: {masks} secret value(s) redacted from this output (shown as ***)\n"),
        );
    }

    out
}

#[cfg(test)]
mod tests {
    use super::super::testdata;
    use super::*;

    fn opts(verbose: bool) -> ConsoleOptions {
        ConsoleOptions {
            color: false,
            verbose,
            secrets: testdata::secrets(),
            redaction: Default::default(),
        }
    }

    /// Replace durations (`\d+\.\d{3}s`) with `<T>`, as golden tests do.
    fn mask(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < bytes.len() {
            let start = i;
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            let is_time = j > start
                && (start == 0 || !bytes[start - 1].is_ascii_alphanumeric())
                && bytes.get(j) == Some(&b'.')
                && bytes.len() > j + 4
                && bytes[j + 1..j + 4].iter().all(u8::is_ascii_digit)
                && bytes[j + 4] == b's';
            if is_time {
                out.push_str("<T>");
                i = j + 5;
            } else {
                let ch = text[i..].chars().next().unwrap();
                out.push(ch);
                i += ch.len_utf8();
            }
        }
        out
    }

    #[test]
    fn passing_suite_is_one_line() {
        let report = testdata::report();
        let text = render_suite(&report.suites[0], &opts(false));
        assert_eq!(text, "PASS  initialize@legacy (2025-06-18) 0.012s\n");
    }

    #[test]
    fn failing_suite_shows_problem_steps() {
        let report = testdata::report();
        let text = mask(&render_suite(&report.suites[1], &opts(false)));
        let expected = r#"FAIL  tools@modern (2025-06-18) <T>
  FAIL  tools/list lists 3 tools
      error: expected <3> & got "2"
        --> scenarios/tools.yaml:12:9
         |
      12 |         length: 3
         |         ^^^^^^ here
      diff (- expected, + actual):
       [
         "a",
      -  "b",
      -  "c"
      +  "b"
       ]
      error: token *** leaked
        --> scenarios/tools.yaml:12:9
         |
      12 |         length: 3
         |         ^^^^^^ here
      expected: 3
      actual:   2
  WARN  titles are set
      error: tool has no title
        --> scenarios/tools.yaml:12:9
         |
      12 |         length: 3
         |         ^^^^^^ here
  ERROR call slow tool: timed out after 5s
      no response to request id 7
  SKIP  legacy batch (era modern)
  XFAIL known bug (baseline entry: tools@modern/known bug)
"#;
        assert_eq!(text, expected);
        assert!(!text.contains(testdata::SECRET));
    }

    #[test]
    fn setup_error_and_stderr_are_shown() {
        let report = testdata::report();
        let text = mask(&render_suite(&report.suites[2], &opts(false)));
        assert_eq!(
            text,
            "ERROR resources@auto <T>\n  ERROR setup: server exited with status 1 before initialize\n  server stderr (last lines):\n      | panic: missing API_KEY\n      | exit\n"
        );
    }

    #[test]
    fn verbose_prints_passing_steps_and_redacted_transcript() {
        let report = testdata::report();
        let text = mask(&render_suite(&report.suites[0], &opts(true)));
        assert_eq!(
            text,
            "PASS  initialize@legacy (2025-06-18) <T>\n  PASS  initialize <T>\n      --> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"token\":\"***\"}}\n      <-- [HTTP 200] {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n      # session established\n"
        );
        let text = render_suite(&report.suites[1], &opts(true));
        assert!(text.contains("  PASS  tools present"));
        assert!(text.contains(
            "<-- [HTTP 200 content-type: application/json] {\"result\":{\"echo\":\"***\"}}"
        ));
        assert!(text.contains("      error: isError was false"));
        assert!(!text.contains(testdata::SECRET));
    }

    #[test]
    fn summary_says_how_many_values_were_redacted() {
        let report = testdata::report();
        let o = opts(true);
        assert!(!render_summary(&report, &o).contains("redacted"));
        let text = render_suite(&report.suites[0], &o) + &render_suite(&report.suites[1], &o);
        let masks = text.matches("***").count();
        assert!(masks >= 2, "{text}");
        let summary = render_summary(&report, &o);
        assert!(
            summary.starts_with(&format!(
                "note: {masks} secret value(s) redacted from this output (shown as ***)\nSummary:"
            )),
            "{summary}"
        );
    }

    #[test]
    fn server_control_characters_are_escaped() {
        let mut report = testdata::report();
        report.suites[1].stderr_tail = Some("boom \u{1b}]0;title\u{7}\u{1b}[2J\0 end".into());
        let text = render_suite(&report.suites[1], &opts(false));
        assert!(!text.contains('\u{1b}') && !text.contains('\0'), "{text:?}");
        assert!(
            text.contains("| boom \\u{1B}]0;title\\u{7}\\u{1B}[2J\\u{0} end"),
            "{text}"
        );
    }

    #[test]
    fn summary_lines() {
        let report = testdata::report();
        let text = mask(&render_summary(&report, &opts(false)));
        assert_eq!(
            text,
            "Summary: 3 suites, 8 steps: 2 passed, 1 failed, 2 errors, 1 warnings, 1 skipped, 1 expected failures in <T>\n"
        );
    }

    /// One summary line, whatever the counts: nothing else restates them differently.
    #[test]
    fn one_summary_line_and_the_interruption() {
        let mut report = testdata::report();
        let text = render_summary(&report, &opts(false));
        assert_eq!(text.lines().count(), 1, "{text}");
        report.interrupted = Some("SIGTERM".into());
        report.summary.interrupted = 1;
        let text = mask(&render_summary(&report, &opts(false)));
        assert!(
            text.ends_with("\nInterrupted by SIGTERM: 1 of 3 suites did not finish (reported as `interrupted` errors)\n"),
            "{text}"
        );
    }

    /// A setup error several suites share, and an `auto` fallback, are printed once.
    #[test]
    fn streamed_suites_say_shared_things_once() {
        let mut suite = testdata::report().suites[2].clone();
        suite.stderr_tail = None;
        suite.era.requested = "auto".into();
        suite.era.era = Some("legacy".into());
        suite.era.note = Some("auto: server/discover answered -32601; fell back to legacy".into());
        let mut seen = Seen::default();
        let first = render_streamed(&suite, &opts(false), &mut seen);
        let second = render_streamed(&suite, &opts(false), &mut seen);
        let err = suite.setup_error.clone().unwrap();
        let first_line = err.lines().next().unwrap();
        assert!(first.contains(first_line), "{first}");
        assert!(
            first.contains("era: auto: server/discover answered -32601"),
            "{first}"
        );
        assert!(!second.contains(first_line), "{second}");
        assert!(!second.contains("era: "), "{second}");
        assert!(
            second.contains("(the same setup error as above)"),
            "{second}"
        );
        assert_eq!(second.lines().count(), 1, "{second}");
    }

    #[test]
    fn color_only_when_asked() {
        let report = testdata::report();
        let mut o = opts(false);
        let plain = render_suite(&report.suites[1], &o);
        assert!(!plain.contains('\u{1b}'));
        o.color = true;
        let colored = render_suite(&report.suites[1], &o);
        assert!(colored.contains('\u{1b}'));
        assert!(colored.starts_with(&format!(
            "{}FAIL{}",
            Style::new().fg_color(Some(AnsiColor::Red.into())).bold().render(),
            Style::new().fg_color(Some(AnsiColor::Red.into())).bold().render_reset()
        )));
        let summary = render_summary(&report, &o);
        assert!(summary.contains('\u{1b}'));
        assert!(!format!("{o:?}").contains(testdata::SECRET));
    }
}
