//! The ranges of every number a user gives mcpspec (scenario keys, `mcpspec.yaml`, flags):
//! `validate` refuses a value outside them with its position, so `run` never meets a
//! count that cannot be allocated or a deadline that overflows the clock. The DSL types
//! show the same ranges in the JSON Schema (`minimum`/`maximum`).

use std::ops::RangeInclusive;
use std::time::Duration;

/// `retry.count`: attempts after the first one.
pub const RETRY_COUNT: RangeInclusive<u32> = 1..=100;
/// `check.count`: requests in a `stdout_clean` burst, calls per tool of `handles_unguessable`.
pub const CHECK_COUNT: RangeInclusive<u32> = 1..=10_000;
/// Per-request timeouts: a step's `timeout`, `--timeout`, `timeout` in mcpspec.yaml.
pub const TIMEOUT: RangeInclusive<Duration> =
    Duration::from_millis(1)..=Duration::from_secs(24 * 3600);
/// The pause between retries (`retry.interval`).
pub const RETRY_INTERVAL: RangeInclusive<Duration> = Duration::ZERO..=Duration::from_secs(3600);
/// `--jobs`, `jobs` in mcpspec.yaml: scenarios run concurrently.
pub const JOBS: RangeInclusive<usize> = 1..=1024;
/// `--shard K/N`: the number of shards N.
pub const SHARDS: RangeInclusive<usize> = 1..=10_000;
/// `client.maxRounds`: `input_required` rounds one request may take (2026-07-28).
pub const MAX_ROUNDS: RangeInclusive<u32> = 1..=64;
/// `task.maxPolls`: `tasks/get` polls of one task step.
pub const TASK_POLLS: RangeInclusive<u32> = 1..=100_000;
/// `task.pollInterval`: the pause between `tasks/get` polls when the server suggests none;
/// a server's `pollInterval` is held within the same range.
pub const TASK_POLL_INTERVAL: RangeInclusive<Duration> =
    Duration::from_millis(1)..=Duration::from_secs(60);
/// Virtual clients of a closed-loop load (`--clients`, `load.clients`).
pub const CLIENTS: RangeInclusive<usize> = 1..=10_000;
/// How long a load run measures, warms up, ramps or holds a stage.
pub const LOAD_DURATION: RangeInclusive<Duration> =
    Duration::from_millis(1)..=Duration::from_secs(7 * 24 * 3600);
/// An open loop's rate, iterations a second (above 0).
pub const MAX_RATE: f64 = 1e7;
/// `load.think`: a client's pause between iterations.
pub const THINK: RangeInclusive<Duration> = Duration::ZERO..=Duration::from_secs(3600);
/// `--max-message-size`: bytes of one message from the server.
pub const MESSAGE_BYTES: RangeInclusive<usize> = 1024..=1 << 30;

/// How a range is written in diagnostics and the README: `1 to 100`.
pub fn describe<T: std::fmt::Display>(range: &RangeInclusive<T>) -> String {
    format!("{} to {}", range.start(), range.end())
}

/// How a duration range is written: `1ms to 1day`.
pub fn describe_durations(range: &RangeInclusive<Duration>) -> String {
    let show = |d: &Duration| {
        if d.is_zero() {
            "0s".to_string()
        } else {
            humantime::format_duration(*d).to_string()
        }
    };
    format!("{} to {}", show(range.start()), show(range.end()))
}

/// A duration such as `500ms` or `30s`, within `range`. The error says what was wrong
/// (the parser's words, or the range), without the value: callers show it or point at it.
pub fn duration(text: &str, range: &RangeInclusive<Duration>) -> Result<Duration, String> {
    let d = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if range.contains(&d) {
        Ok(d)
    } else {
        Err(format!(
            "out of range (expected {})",
            describe_durations(range)
        ))
    }
}

/// A whole number within `range`, for flags and keys read as text.
pub fn number<T>(text: &str, range: &RangeInclusive<T>) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    let n: T = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number"))?;
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{n} is out of range (expected {})",
            describe(range)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_outside_the_range_are_refused() {
        assert_eq!(duration("30s", &TIMEOUT), Ok(Duration::from_secs(30)));
        assert_eq!(
            duration("18446744073709551615s", &TIMEOUT),
            Err("out of range (expected 1ms to 1day)".into())
        );
        assert!(duration("0s", &TIMEOUT).is_err());
        assert_eq!(duration("0s", &RETRY_INTERVAL), Ok(Duration::ZERO));
        assert!(
            duration("x", &TIMEOUT)
                .unwrap_err()
                .contains("expected number")
        );
    }

    #[test]
    fn numbers_outside_the_range_are_refused() {
        assert_eq!(number("4", &JOBS), Ok(4));
        assert_eq!(
            number("0", &JOBS),
            Err("0 is out of range (expected 1 to 1024)".into())
        );
        assert!(number::<usize>("99999999999999999999999", &JOBS).is_err());
    }
}
