//! Console output that never panics. `print!`/`eprint!` panic when the stream is gone
//! (`mcpspec validate … | head -2` closes stdout early; with SIGPIPE ignored, as the Rust
//! runtime sets it, a write then fails with EPIPE). SIGPIPE stays ignored: mcpspec writes to
//! servers' stdin pipes, where a dead server must be an error to report, not our death.
//!
//! So every console write goes through here and a failed write is dropped: the command
//! carries on (reports to files are still written) and exits with its own code.

use std::fmt::Arguments;
use std::io::Write;

/// Write to stdout; a closed or failing stdout is ignored.
pub fn out(args: Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_fmt(args);
    let _ = stdout.flush();
}

/// Write to stderr; a closed or failing stderr is ignored.
pub fn err(args: Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `print!` that never panics (see [`crate::ground::output`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::ground::output::out(format_args!($($arg)*))
    };
}

/// `println!` that never panics (see [`crate::ground::output`]).
macro_rules! outln {
    () => {
        $crate::ground::output::out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::ground::output::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics (see [`crate::ground::output`]).
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::ground::output::err(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics (see [`crate::ground::output`]).
macro_rules! errln {
    () => {
        $crate::ground::output::err(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::ground::output::err(format_args!("{}\n", format_args!($($arg)*)))
    };
}
