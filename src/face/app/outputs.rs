//! What a `run` writes, each a subscriber to the run's events (see
//! [`crate::results::report::events`]): the console report, the JUnit report (written as the suites
//! come), the report files of the finished run, and the `--last-failed` record.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use crate::face::cli::{ColorChoice, RunArgs, exit};
use crate::results::report::events::{Event, Moment, RunInfo, Subscriber};
use crate::results::report::junit::{JunitStream, Run};
use crate::results::report::{self, console::ConsoleOptions, console::Seen};

use super::progress::{ProgressLine, ScreenLock};
use crate::face::app::report_files::{ReportPaths, is_stdout, write_reports, write_reports_file};

/// Every output of a run, in the order they hear of each event.
pub(super) struct Outputs {
    pub live: ProgressLine,
    pub console: Console,
    pub junit: Option<Junit>,
    pub files: Files,
    pub last_run: LastRunWriter,
}

impl Outputs {
    /// The outputs `args` ask for, for a run of `total` items.
    pub fn new(
        args: &RunArgs,
        total: usize,
        secrets: Vec<String>,
        last_run: crate::face::last_run::LastRun,
        last_run_path: PathBuf,
    ) -> Outputs {
        let live = ProgressLine::start(total);
        // `--json -`: stdout carries the JSON result alone, the console report goes to stderr.
        let console_to_stderr = is_stdout(args.json.as_deref());
        let console = Console {
            out: if console_to_stderr {
                Box::new(std::io::stderr())
            } else {
                Box::new(std::io::stdout())
            },
            opts: ConsoleOptions {
                color: use_color(args.color, console_to_stderr),
                verbose: args.verbose,
                secrets: secrets.clone(),
                redaction: Default::default(),
            },
            seen: Seen::default(),
            screen: live.screen(),
        };
        let flavor = args.junit_flavor.unwrap_or_default();
        let junit = args
            .junit
            .clone()
            .map(|path| Junit::new(path, &secrets, flavor));
        let files = Files {
            paths: ReportPaths {
                junit: None,
                junit_flavor: flavor,
                json: args.json.clone(),
                html: args.html.clone(),
                sarif: args.sarif.clone(),
                sarif_source: args.sarif_source.clone(),
            },
            write_baseline: args.write_baseline.clone(),
            force: args.force,
            strict: args.strict,
            secrets,
            failed: None,
        };
        Outputs {
            live,
            console,
            junit,
            files,
            last_run: LastRunWriter {
                record: last_run,
                path: last_run_path,
                strict: args.strict,
            },
        }
    }

    /// Stop the live line; the exit code of a report that could not be written.
    pub fn finish(self) -> Option<i32> {
        self.live.finish();
        self.files.failed.or(self.junit.and_then(|j| j.failed))
    }
}

/// The console report: each suite as it finishes (the live line held off), the summary at
/// the end.
pub(super) struct Console {
    pub out: Box<dyn Write + Send>,
    pub opts: ConsoleOptions,
    pub seen: Seen,
    pub screen: ScreenLock,
}

impl Subscriber for Console {
    fn on(&mut self, event: &Event<'_>, _: &Moment) {
        match *event {
            Event::SuiteFinished(suite) => {
                let (out, opts, seen) = (&mut self.out, &self.opts, &mut self.seen);
                self.screen.while_cleared(|| {
                    let text = report::console::render_streamed(suite, opts, seen);
                    let _ = out.write_all(text.as_bytes());
                    let _ = out.flush();
                });
            }
            Event::RunFinished(report) => {
                let _ = self
                    .out
                    .write_all(report::console::render_summary(report, &self.opts).as_bytes());
            }
            _ => {}
        }
    }
}

/// `--junit FILE`, written as the suites come: what it keeps is the totals.
pub(super) struct Junit {
    path: PathBuf,
    stream: Option<JunitStream>,
    run: RunInfo,
    /// An exit code when the report could not be written.
    pub failed: Option<i32>,
}

impl Junit {
    pub fn new(path: PathBuf, secrets: &[String], flavor: crate::results::junit::Flavor) -> Junit {
        let (stream, failed) = match JunitStream::new(secrets, flavor) {
            Ok(stream) => (Some(stream), None),
            Err(e) => (None, Some(cannot_write(&path, &e))),
        };
        Junit {
            path,
            stream,
            run: RunInfo::default(),
            failed,
        }
    }

    fn add(&mut self, suite: &report::result::SuiteResult) {
        let Some(stream) = &mut self.stream else {
            return;
        };
        if let Err(e) = stream.suite(Run::of_info(&self.run), suite) {
            self.failed = Some(cannot_write(&self.path, &e));
            self.stream = None;
        }
    }
}

fn cannot_write(path: &std::path::Path, e: &std::io::Error) -> i32 {
    errln!("error: cannot write {}: {e}", path.display());
    exit::INVALID_INPUT
}

impl Subscriber for Junit {
    fn on(&mut self, event: &Event<'_>, _: &Moment) {
        match *event {
            Event::RunStarted(info) => self.run = info.clone(),
            Event::SuiteFinished(suite) | Event::SuiteInterrupted(suite) => self.add(suite),
            Event::RunFinished(report) => {
                let Some(stream) = self.stream.take() else {
                    return;
                };
                if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    let _ = std::fs::create_dir_all(dir);
                }
                let written = std::fs::File::create(&self.path).and_then(|file| {
                    let mut file = std::io::BufWriter::new(file);
                    stream.finish(report, &mut file)
                });
                if let Err(e) = written {
                    self.failed = Some(cannot_write(&self.path, &e));
                }
            }
            _ => {}
        }
    }
}

/// The files of the finished run: JSON, HTML, SARIF and `--write-baseline`.
pub(super) struct Files {
    pub paths: ReportPaths,
    pub write_baseline: Option<PathBuf>,
    /// `--force`: write the baseline even of an era in which nothing connected.
    pub force: bool,
    pub strict: bool,
    pub secrets: Vec<String>,
    /// An exit code when a file could not be written.
    pub failed: Option<i32>,
}

impl Subscriber for Files {
    fn on(&mut self, event: &Event<'_>, _: &Moment) {
        let Event::RunFinished(report) = *event else {
            return;
        };
        // With what the run learned on the way (secret-named vars rendered by templates).
        let mut secrets = self.secrets.clone();
        secrets.extend(crate::ground::redact::known().values().iter().cloned());
        if let Err(code) = write_reports(report, &self.paths, &secrets) {
            self.failed = Some(code);
            return;
        }
        let Some(path) = &self.write_baseline else {
            return;
        };
        if let Some(signal) = &report.interrupted {
            // The unfinished suites are not failures of the server: no baseline from them.
            errln!(
                "no baseline written to {}: the run was interrupted ({signal})",
                path.display()
            );
            return;
        }
        let unconnected = crate::face::baseline::unconnected_eras(report);
        if !self.force && !unconnected.is_empty() {
            for u in &unconnected {
                errln!(
                    "no baseline written to {}: no scenario connected in era `{}` ({} suite(s); {}); \
                     a baseline would list them all and hide that the server does not speak it. \
                     Run the eras it speaks (`--era`), fix the connection, or add --force to write it anyway",
                    path.display(),
                    u.era,
                    u.suites,
                    u.reason
                );
            }
            return;
        }
        let text = crate::face::baseline::write_from(report, self.strict);
        if let Err(code) = write_reports_file(path, text) {
            self.failed = Some(code);
            return;
        }
        errln!(
            "baseline of this run's failures written to {}",
            path.display()
        );
    }
}

/// Writes the `--last-failed` record when the run finishes: what failed in this run.
pub(super) struct LastRunWriter {
    pub record: crate::face::last_run::LastRun,
    pub path: PathBuf,
    pub strict: bool,
}

impl Subscriber for LastRunWriter {
    fn on(&mut self, event: &Event<'_>, _: &Moment) {
        if let Event::RunFinished(report) = *event {
            self.record.update(report, self.strict);
            if let Err(e) = self.record.save(&self.path) {
                errln!("warning: --last-failed record not updated: {e}");
            }
        }
    }
}

/// Color for the console report, written to stdout (or stderr, `to_stderr`).
pub(super) fn use_color(choice: ColorChoice, to_stderr: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let terminal = if to_stderr {
                std::io::stderr().is_terminal()
            } else {
                std::io::stdout().is_terminal()
            };
            terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}
