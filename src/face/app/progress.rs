//! The live progress of `run` on stderr: a subscriber to the run's events that keeps what
//! runs now (each running `scenario@era` and its current step), drawn by a thread of its own.
//!
//! On a terminal (and not in CI): one status line, redrawn a few times a second once the run
//! has taken longer than a moment — finished/total, the oldest running `scenario@era`, its
//! step and how long that step has been running, and how many others run beside it. It is
//! cleared while a suite's report is printed.
//!
//! Elsewhere (a pipe, a file, `CI` set): plain lines, only for a step that runs long —
//! `… still running ID › STEP (30s)` every `MCPSPEC_PROGRESS_EVERY` (default 30s) — so a
//! CI log is never silent for a minute and a fast run prints nothing extra.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::ground::redact::escape_controls;
use crate::results::report::events::{Event, Moment, Subscriber};

/// How long a run goes before the terminal line appears.
const SHOW_AFTER: Duration = Duration::from_millis(800);
/// Default interval of the plain "still running" lines.
const PLAIN_EVERY: Duration = Duration::from_secs(30);
/// The longest status line drawn (a wider line would wrap and break the redraw).
const MAX_WIDTH: usize = 120;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Terminal,
    Plain(Duration),
}

/// The renderer thread and the lock that keeps its line apart from the suites' output.
pub(super) struct ProgressLine {
    live: Arc<Mutex<ProgressState>>,
    screen: Arc<Mutex<Screen>>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// What runs at one moment.
#[derive(Clone, Debug, Default)]
struct ProgressState {
    /// Items finished so far.
    finished: usize,
    /// Items running, oldest first.
    running: Vec<Running>,
}

/// One item being run.
#[derive(Clone, Debug)]
struct Running {
    /// `scenario@era`.
    id: String,
    /// The step being run (`connecting` before the first one).
    step: String,
    /// When the current step began.
    since: Instant,
}

/// Holds the live line off while something else is printed (see [`ProgressLine::screen`]).
#[derive(Clone)]
pub(super) struct ScreenLock(Arc<Mutex<Screen>>);

impl ScreenLock {
    /// Run `write` (printing a suite) with the status line cleared and held off.
    pub(super) fn while_cleared(&self, write: impl FnOnce()) {
        let mut screen = lock(&self.0);
        clear(&mut screen);
        write();
    }
}

/// Cheap on the step path: one uncontended lock and a copy of the step's name into a
/// buffer that is reused.
impl Subscriber for ProgressLine {
    fn on(&mut self, event: &Event<'_>, moment: &Moment) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        match *event {
            Event::SuiteStarted { id } => live.running.push(Running {
                id: id.to_string(),
                step: "connecting".into(),
                since: moment.at,
            }),
            Event::StepStarted { suite, step } => {
                if let Some(running) = live.running.iter_mut().find(|r| r.id == suite) {
                    running.step.clear();
                    running.step.push_str(step);
                    running.since = moment.at;
                }
            }
            Event::SuiteEnded { id } => {
                if let Some(i) = live.running.iter().position(|r| r.id == id) {
                    live.running.remove(i);
                }
                live.finished = moment.counts.ended;
            }
            _ => {}
        }
    }
}

/// Whether the terminal line is on screen now.
#[derive(Default)]
struct Screen {
    shown: bool,
}

impl ProgressLine {
    /// Start rendering the progress of a run of `total` items.
    pub(super) fn start(total: usize) -> ProgressLine {
        let mode = mode();
        let live = Arc::new(Mutex::new(ProgressState::default()));
        let screen = Arc::new(Mutex::new(Screen::default()));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = {
            let screen = Arc::clone(&screen);
            let live = Arc::clone(&live);
            std::thread::Builder::new()
                .name("mcpspec-progress".into())
                .spawn(move || render_loop(mode, &live, total, &screen, &stopped))
                .ok()
        };
        ProgressLine {
            live,
            screen,
            stop: Some(stop),
            thread,
        }
    }

    /// For the console: prints with the status line cleared.
    pub(super) fn screen(&self) -> ScreenLock {
        ScreenLock(Arc::clone(&self.screen))
    }

    /// Stop the renderer and clear its line.
    pub(super) fn finish(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        clear(&mut lock(&self.screen));
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn lock(screen: &Mutex<Screen>) -> MutexGuard<'_, Screen> {
    screen.lock().unwrap_or_else(|e| e.into_inner())
}

fn clear(screen: &mut Screen) {
    if screen.shown {
        err!("\r\x1b[2K");
        screen.shown = false;
    }
}

/// Whether a live line may be drawn: stderr is a terminal, and not in CI.
pub(super) fn on_terminal() -> bool {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    std::io::stderr().is_terminal() && !ci
}

fn mode() -> Mode {
    if on_terminal() {
        return Mode::Terminal;
    }
    let every = std::env::var("MCPSPEC_PROGRESS_EVERY")
        .ok()
        .and_then(|v| humantime::parse_duration(v.trim()).ok())
        .filter(|d| *d >= Duration::from_millis(100))
        .unwrap_or(PLAIN_EVERY);
    Mode::Plain(every)
}

fn render_loop(
    mode: Mode,
    live: &Mutex<ProgressState>,
    total: usize,
    screen: &Mutex<Screen>,
    stopped: &mpsc::Receiver<()>,
) {
    let started = Instant::now();
    let tick = match mode {
        Mode::Terminal => Duration::from_millis(200),
        Mode::Plain(every) => (every / 4).clamp(Duration::from_millis(50), Duration::from_secs(1)),
    };
    // Plain mode: how many "still running" lines each (item, step start) has had.
    let mut told: Vec<(String, Instant, u32)> = Vec::new();
    loop {
        match stopped.recv_timeout(tick) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        let now = live.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match mode {
            Mode::Terminal => {
                if started.elapsed() < SHOW_AFTER || now.running.is_empty() {
                    continue;
                }
                let line = status_line(&now, total);
                let mut screen = lock(screen);
                err!("\r\x1b[2K{line}");
                screen.shown = true;
            }
            Mode::Plain(every) => {
                told.retain(|(id, since, _)| {
                    now.running.iter().any(|r| r.id == *id && r.since == *since)
                });
                for running in &now.running {
                    let ran = running.since.elapsed();
                    let due = (ran.as_secs_f64() / every.as_secs_f64()) as u32;
                    if due == 0 {
                        continue;
                    }
                    let entry = match told
                        .iter_mut()
                        .find(|(id, since, _)| *id == running.id && *since == running.since)
                    {
                        Some(entry) => entry,
                        None => {
                            told.push((running.id.clone(), running.since, 0));
                            told.last_mut().expect("just pushed")
                        }
                    };
                    if entry.2 < due {
                        entry.2 = due;
                        let _screen = lock(screen);
                        errln!(
                            "… still running {} › {} ({:.1}s)",
                            escape_controls(&running.id),
                            escape_controls(&running.step),
                            ran.as_secs_f64()
                        );
                    }
                }
            }
        }
    }
}

/// `[3/35] modern-http@2026-07-28 › invalid_origin_rejected (1.2s) +2 running`
fn status_line(now: &ProgressState, total: usize) -> String {
    let Some(oldest) = now.running.iter().min_by_key(|r| r.since) else {
        return String::new();
    };
    let mut line = format!(
        "[{}/{}] {} › {} ({:.1}s)",
        now.finished,
        total,
        escape_controls(&oldest.id),
        escape_controls(&oldest.step),
        oldest.since.elapsed().as_secs_f64()
    );
    if now.running.len() > 1 {
        line.push_str(&format!(" +{} running", now.running.len() - 1));
    }
    if line.chars().count() > MAX_WIDTH {
        line = line.chars().take(MAX_WIDTH - 1).collect();
        line.push('…');
    }
    line
}
